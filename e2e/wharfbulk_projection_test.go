package e2e_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/platformsim"
)

// bulkProjectionEnv is projectionEnv (no status webhook at all) with the
// account unpaced and a template mirrored as a Platform Template: it
// answers the template document's name.
func bulkProjectionEnv(t *testing.T) (*apptest.SimEnv, frappeClient, string, string) {
	t.Helper()
	e, c, orgID, accountID := projectionEnv(t)
	e.DB.Exec(`UPDATE platform_accounts SET messaging_tier_override = 'TIER_UNLIMITED'`)
	tmpl := e.SeedTemplate(orgID, accountID, "bulk_projected", "Hello {{1}}", false)
	return e, c, orgID, mirrorTemplate(c, tmpl, "Hello {{1}}")
}

// bulkDocs reads the Platform Messages of a bulk message: provider id ->
// the document's fields.
func bulkDocs(e *apptest.SimEnv, bulk string) map[string]map[string]string {
	var rows []struct{ Name, Type, To, MessageType, ContentType, MessageID, Status, CoreRecipientID string }
	e.DB.Raw(`SELECT name, data->>'type' AS type, data->>'to' AS to, data->>'message_type' AS message_type,
		data->>'content_type' AS content_type, COALESCE(data->>'message_id', '') AS message_id, COALESCE(data->>'status', '') AS status,
		COALESCE(data->>'core_recipient_id', '') AS core_recipient_id
		FROM docframe_documents WHERE doctype = 'Platform Message' AND data->>'bulk_message' = ?`, bulk).Scan(&rows)
	out := map[string]map[string]string{}
	for _, r := range rows {
		out[r.MessageID] = map[string]string{"name": r.Name, "type": r.Type, "to": r.To, "message_type": r.MessageType,
			"content_type": r.ContentType, "status": r.Status, "core_recipient_id": r.CoreRecipientID}
	}
	return out
}

// TestBulkMessageProjection: a bulk message's sends show as Outgoing
// Platform Messages with the provider's message_id and status sent as soon
// as the campaign's chunk settled, with no status webhook at all (the
// campaign's outbox event, not a status, brings them); the bulk message's
// counters match, and get_message_status finds a send by its id.
func TestBulkMessageProjection(t *testing.T) {
	e, c, _, tmpl := bulkProjectionEnv(t)
	const bulks = "/api/resource/Platform%20Bulk%20Message"
	const n = 40
	recipients := make([]map[string]any, n)
	for i := range recipients {
		recipients[i] = map[string]any{"mobile_number": fmt.Sprintf("+1555004%04d", i)}
	}
	bulk := c.data("POST", bulks, map[string]any{"title": "Projected", "template": tmpl, "platform_account": "Main",
		"recipients": recipients, "variable_type": "Common", "template_variables": map[string]any{"1": "Ann"}}, 201)
	name := bulk["name"].(string)
	c.data("POST", bulks+"/"+name+"/submit", nil, 200)

	var sims []platformsim.Message
	apptest.Eventually(t, 20*time.Second, "the simulator accepted every send", func() bool {
		sims = e.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: e.PhoneNumberID()})
		return len(sims) == n
	})
	var docs map[string]map[string]string
	apptest.Eventually(t, 20*time.Second, "a Platform Message per send, with its message_id and status sent", func() bool {
		docs = bulkDocs(e, name)
		if len(docs) != n {
			return false
		}
		for _, m := range sims {
			d := docs[m.ID]
			if d == nil || d["status"] != "sent" || d["to"] != "+"+m.To {
				return false
			}
		}
		return true
	})
	for id, d := range docs {
		if d["type"] != "Outgoing" || d["message_type"] != "Template" || d["content_type"] != "template" || d["core_recipient_id"] == "" {
			t.Fatalf("document of %s: %v", id, d)
		}
	}
	apptest.Eventually(t, 20*time.Second, "the bulk message completed with its counters", func() bool {
		d := c.data("GET", bulks+"/"+name, nil, 200)
		return d["status"] == "Completed" && fmt.Sprint(d["sent_count"]) == fmt.Sprint(n) && fmt.Sprint(d["failed_count"]) == "0" &&
			fmt.Sprint(d["recipient_count"]) == fmt.Sprint(n)
	})
	noStatusWebhook(t, e)
	st := c.do("GET", "/api/method/wharf.api.get_message_status?message_id="+url.QueryEscape(sims[0].ID), nil, 200)["message"].(map[string]any)
	if st["message_id"] != sims[0].ID || st["status"] != "sent" {
		t.Fatalf("get_message_status: %v", st)
	}
	// Every event again (at least once): nothing changes, one document per
	// send.
	var events []struct {
		OrganizationID uuid.UUID
		Data           string
	}
	e.DB.Raw(`SELECT organization_id, data::text AS data FROM events WHERE event = ?`, webhooks.EventCampaignChanged).Scan(&events)
	if len(events) == 0 {
		t.Fatal("no campaign.changed event in the outbox")
	}
	for _, ev := range events {
		if err := e.API.Services.Bulk.Consume(t.Context(), ev.OrganizationID, webhooks.EventCampaignChanged, []byte(ev.Data)); err != nil {
			t.Fatal(err)
		}
	}
	if again := bulkDocs(e, name); len(again) != n || again[sims[0].ID]["name"] != docs[sims[0].ID]["name"] || again[sims[0].ID]["status"] != "sent" {
		t.Fatalf("after the events again: %d documents, %v", len(again), again[sims[0].ID])
	}
}

// TestBulkMessageStatusBeforeItsDocument: a status webhook that reaches a
// bulk message's recipient before the document of its send exists (the
// projector has not run yet: the queue that dispatches the outbox is
// paused) ends with the document at that status, once the projector runs.
func TestBulkMessageStatusBeforeItsDocument(t *testing.T) {
	e, c, orgID, tmpl := bulkProjectionEnv(t)
	const bulks = "/api/resource/Platform%20Bulk%20Message"
	insp := e.Inspector()
	if err := insp.PauseQueue(jobs.QueueDefault); err != nil {
		t.Fatal(err)
	}
	unpause := func() { _ = insp.UnpauseQueue(jobs.QueueDefault) }
	t.Cleanup(unpause)
	bulk := c.data("POST", bulks, map[string]any{"title": "Early status", "template": tmpl, "platform_account": "Main",
		"recipients": []map[string]any{{"mobile_number": "+15550049001"}}, "template_variables": map[string]any{"1": "Bo"}}, 201)
	name := bulk["name"].(string)
	c.data("POST", bulks+"/"+name+"/submit", nil, 200)
	var pid string
	apptest.Eventually(t, 20*time.Second, "the recipient's send accepted", func() bool {
		e.DB.Raw(`SELECT COALESCE(platform_message_id, '') FROM campaign_recipients WHERE organization_id = ? AND phone_number = '+15550049001'`,
			orgID).Scan(&pid)
		return pid != ""
	})
	if code, err := e.Sim.PostStatus(t.Context(), pid, "delivered", 0); err != nil || code != 200 {
		t.Fatalf("status webhook: %d %v", code, err)
	}
	apptest.Eventually(t, 20*time.Second, "the recipient delivered", func() bool {
		var st string
		e.DB.Raw(`SELECT status FROM campaign_recipients WHERE platform_message_id = ?`, pid).Scan(&st)
		return st == "delivered"
	})
	if docs := bulkDocs(e, name); len(docs) != 0 {
		t.Fatalf("a document before the projector ran: %v", docs)
	}
	unpause()
	apptest.Eventually(t, 20*time.Second, "the document delivered", func() bool {
		d := bulkDocs(e, name)[pid]
		return d != nil && d["status"] == "delivered"
	})
	if docs := bulkDocs(e, name); len(docs) != 1 {
		t.Fatalf("%d documents, want 1", len(docs))
	}
}
