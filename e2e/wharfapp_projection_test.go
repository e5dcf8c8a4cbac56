package e2e_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/jobs"
	"wharf/models"
	"wharf/platformsim"
)

// projectionEnv is a system whose simulator sends no status webhook at
// all, with the framework's default account Main connected: a document
// can learn what became of its send only from the core row, through the
// projector (the send's outbox event). It answers the organization's and
// the account's core ids.
func projectionEnv(t *testing.T) (*apptest.SimEnv, frappeClient, string, string) {
	t.Helper()
	e := apptest.NewWithSim(t, nil, func(c *platformsim.Config) { c.SentAfter, c.DeliveredAfter, c.ReadAfter = -1, -1, -1 })
	e.StartWorker()
	admin := e.Admin()
	c := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	var orgID string
	e.DB.Raw(`SELECT id FROM organizations ORDER BY created_at LIMIT 1`).Scan(&orgID)
	c.data("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "Main", "token": e.WABA.AccessToken,
		"phone_id": e.PhoneNumberID(), "business_id": e.WABA.ID, "app_id": "123", "webhook_verify_token": "wharf-verify",
		"is_default_outgoing": 1, "is_default_incoming": 1}, 201)
	var core models.PlatformAccount
	apptest.Eventually(t, 10*time.Second, "core account active", func() bool {
		return e.DB.Take(&core, "organization_id = ? AND name = ?", orgID, "Main").Error == nil && core.Status == models.AccountActive
	})
	return e, c, orgID, core.ID.String()
}

// noStatusWebhook fails the test when the simulator sent a status webhook.
func noStatusWebhook(t *testing.T, e *apptest.SimEnv) {
	t.Helper()
	for _, w := range e.Sim.WebhooksSince(0) {
		if strings.Contains(string(w.Body), `"statuses"`) {
			t.Fatalf("the simulator sent a status webhook: %s", w.Body)
		}
	}
}

// TestWharfMessageProjection: an Outgoing Platform Message shows what its
// core message shows as soon as the provider accepted the send, not at the
// first status webhook (none comes here).
func TestWharfMessageProjection(t *testing.T) {
	e, c, orgID, _ := projectionEnv(t)

	// A document created with type Outgoing through the resource API: it is
	// queued (no message_id yet) and the worker sends it.
	user := "15550003333"
	doc := c.data("POST", "/api/resource/Platform%20Message", map[string]any{"type": "Outgoing", "to": "+" + user,
		"message": "hello without statuses"}, 201)
	name := doc["name"].(string)
	if doc["status"] != "Queued" {
		t.Fatalf("inserted: %v", doc)
	}
	var sims []platformsim.Message
	apptest.Eventually(t, 10*time.Second, "the simulator accepted the send", func() bool {
		sims = e.Sim.Messages(platformsim.MessageFilter{To: user})
		return len(sims) == 1
	})
	var core models.Message
	apptest.Eventually(t, 10*time.Second, "the core message sent", func() bool {
		return e.DB.Take(&core, "organization_id = ? AND platform_message_id = ?", orgID, sims[0].ID).Error == nil
	})
	// The document carries the provider's id and the core row's status.
	apptest.Eventually(t, 10*time.Second, "the document has the message_id", func() bool {
		got := c.data("GET", "/api/resource/Platform%20Message/"+url.PathEscape(name), nil, 200)
		return got["message_id"] == sims[0].ID && got["status"] == "sent" && got["core_message_id"] == core.ID.String()
	})
	noStatusWebhook(t, e)
	st := c.do("GET", "/api/method/wharf.api.get_message_status?message_id="+url.QueryEscape(sims[0].ID), nil, 200)["message"].(map[string]any)
	if st["message_id"] != sims[0].ID || st["status"] != "sent" {
		t.Fatalf("get_message_status: %v", st)
	}
	// A list filtered on the provider's id finds it too (the projection is
	// stored, not computed at read).
	rows := c.do("GET", "/api/resource/Platform%20Message?filters="+url.QueryEscape(`[["message_id","=","`+sims[0].ID+`"]]`), nil, 200)["data"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["name"] != name {
		t.Fatalf("list by message_id: %v", rows)
	}
}

// TestWharfMessageProjectionRefused: a send the provider refuses shows on
// its document as failed with the provider's error, with no status webhook.
func TestWharfMessageProjectionRefused(t *testing.T) {
	e, c, orgID, _ := projectionEnv(t)
	if err := e.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/messages", Code: 100, Times: 1,
		Details: "refused by the projection test"}); err != nil {
		t.Fatal(err)
	}
	doc := c.data("POST", "/api/resource/Platform%20Message", map[string]any{"type": "Outgoing", "to": "+15550003334",
		"message": "hello, refused"}, 201)
	name := doc["name"].(string)
	var core models.Message
	apptest.Eventually(t, 10*time.Second, "the core message failed", func() bool {
		return e.DB.Take(&core, "organization_id = ? AND id = ?", orgID, doc["core_message_id"]).Error == nil &&
			core.Status == models.StatusFailed
	})
	var got map[string]any
	apptest.Eventually(t, 10*time.Second, "the document failed", func() bool {
		got = c.data("GET", "/api/resource/Platform%20Message/"+url.PathEscape(name), nil, 200)
		return got["status"] == "failed"
	})
	if errText, _ := got["error"].(string); !strings.Contains(errText, "refused by the projection test") {
		t.Fatalf("the failed document's error: %v", got)
	}
	if id, _ := got["message_id"].(string); id != "" {
		t.Fatalf("a refused send has a message_id: %v", got)
	}
	if n := len(e.Sim.Messages(platformsim.MessageFilter{To: "15550003334"})); n != 0 {
		t.Fatalf("the simulator holds %d messages to the refused recipient", n)
	}
}

// TestWharfMessageProjectionInABatch: a template Platform Message sent as a
// batch-mate of an API template send (by that send's message:send task: the
// document's own task is removed) gets the provider's id at once too.
func TestWharfMessageProjectionInABatch(t *testing.T) {
	e, c, orgID, accountID := projectionEnv(t)
	tmpl := e.SeedTemplate(orgID, accountID, "projected_hello", "Hello {{1}}", false)
	tplDoc := mirrorTemplate(c, tmpl, "Hello {{1}}")

	// While the critical queue is paused no message:send task runs: the
	// document's own task is deleted, so only the API send's task can send it.
	insp := e.Inspector()
	if err := insp.PauseQueue(jobs.QueueCritical); err != nil {
		t.Fatal(err)
	}
	unpause := func() { _ = insp.UnpauseQueue(jobs.QueueCritical) }
	t.Cleanup(unpause)
	doc := c.data("POST", "/api/resource/Platform%20Message", map[string]any{"type": "Outgoing", "to": "+15550003335",
		"template": tplDoc, "template_parameters": `["Ada"]`}, 201)
	name, coreID := doc["name"].(string), doc["core_message_id"].(string)
	if err := insp.DeleteTask(jobs.QueueCritical, "message-send:"+coreID); err != nil {
		t.Fatalf("delete the document's own task: %v", err)
	}
	admin := e.Admin()
	e.Do("POST", "/api/messages/template", map[string]any{"phone_number": "+15550003336", "template_name": tmpl.Name,
		"template_params": map[string]any{"1": "Bo"}}, admin.Auth()).Expect(t, 202)
	unpause()

	var sims []platformsim.Message
	apptest.Eventually(t, 10*time.Second, "the simulator accepted both sends", func() bool {
		sims = e.Sim.Messages(platformsim.MessageFilter{To: "15550003335"})
		return len(sims) == 1 && len(e.Sim.Messages(platformsim.MessageFilter{To: "15550003336"})) == 1
	})
	apptest.Eventually(t, 10*time.Second, "the document has the message_id", func() bool {
		got := c.data("GET", "/api/resource/Platform%20Message/"+url.PathEscape(name), nil, 200)
		return got["message_id"] == sims[0].ID && got["status"] == "sent"
	})
	noStatusWebhook(t, e)
	st := c.do("GET", "/api/method/wharf.api.get_message_status?message_id="+url.QueryEscape(sims[0].ID), nil, 200)["message"].(map[string]any)
	if st["message_id"] != sims[0].ID || st["status"] != "sent" {
		t.Fatalf("get_message_status: %v", st)
	}
	var core models.Message
	if err := e.DB.WithContext(context.Background()).Take(&core, "id = ?", coreID).Error; err != nil || !core.Projected {
		t.Fatalf("the core message: %v, projected %v", err, core.Projected)
	}
}

// changedEvents counts the message.changed events recorded for a core
// message (the projector's input).
func changedEvents(e *apptest.SimEnv, orgID, coreID string) int64 {
	var n int64
	e.DB.Raw(`SELECT count(*) FROM events WHERE organization_id = ? AND event = 'message.changed' AND data ->> 'message_id' = ?`,
		orgID, coreID).Scan(&n)
	return n
}

// TestWharfMessageProjectionStatuses: the simulator's status webhooks move
// an Outgoing Platform Message to delivered, then read, through the
// projector: each status that changed its core message recorded
// message.changed in the status batch's transaction (the integration's
// status consumer leaves documents with a core message alone). A core
// message no document projects records no message.changed for its
// statuses.
func TestWharfMessageProjectionStatuses(t *testing.T) {
	// Statuses far enough apart that each comes in its own batch and the
	// document is seen delivered before it is read.
	e := apptest.NewWithSim(t, nil, func(c *platformsim.Config) {
		c.SentAfter, c.DeliveredAfter, c.ReadAfter = 50*time.Millisecond, 400*time.Millisecond, 1500*time.Millisecond
	})
	e.StartWorker()
	admin := e.Admin()
	c := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	var orgID string
	e.DB.Raw(`SELECT id FROM organizations ORDER BY created_at LIMIT 1`).Scan(&orgID)
	c.data("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "Main", "token": e.WABA.AccessToken,
		"phone_id": e.PhoneNumberID(), "business_id": e.WABA.ID, "app_id": "123", "webhook_verify_token": "wharf-verify",
		"is_default_outgoing": 1, "is_default_incoming": 1}, 201)
	var core models.PlatformAccount
	apptest.Eventually(t, 10*time.Second, "core account active", func() bool {
		return e.DB.Take(&core, "organization_id = ? AND name = ?", orgID, "Main").Error == nil && core.Status == models.AccountActive
	})

	sent := c.do("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+15550003337", "message": "hello, statuses"},
		200)["message"].(map[string]any)
	name := sent["name"].(string)
	doc := c.data("GET", "/api/resource/Platform%20Message/"+url.PathEscape(name), nil, 200)
	coreID, _ := doc["core_message_id"].(string)
	if coreID == "" || sent["message_id"] == "" {
		t.Fatalf("send_message %v, document %v", sent, doc)
	}
	status := func() string {
		return c.data("GET", "/api/resource/Platform%20Message/"+url.PathEscape(name), nil, 200)["status"].(string)
	}
	apptest.Eventually(t, 10*time.Second, "the document delivered", func() bool { return status() == "delivered" })
	apptest.Eventually(t, 10*time.Second, "the document read", func() bool { return status() == "read" })
	var m models.Message
	if err := e.DB.Take(&m, "id = ?", coreID).Error; err != nil || m.Status != models.StatusRead || !m.Projected {
		t.Fatalf("the core message: %+v %v", m, err)
	}
	// The acceptance, delivered and read: one event each (a status that
	// changed nothing records none, a sent that came before the answer
	// may add one).
	if n := changedEvents(e, orgID, coreID); n < 3 {
		t.Fatalf("%d message.changed events for the projected message, want at least 3", n)
	}

	// An API template send, which no document projects: read too, and no
	// message.changed for it.
	tmpl := e.SeedTemplate(orgID, core.ID.String(), "plain_hello", "Hello {{1}}", false)
	e.Do("POST", "/api/messages/template", map[string]any{"phone_number": "+15550003338", "template_name": tmpl.Name,
		"template_params": map[string]any{"1": "Bo"}}, admin.Auth()).Expect(t, 202)
	var plain models.Message
	apptest.Eventually(t, 10*time.Second, "the API send read", func() bool {
		return e.DB.Take(&plain, "organization_id = ? AND direction = ? AND NOT projected", orgID, models.DirectionOutgoing).Error == nil &&
			plain.Status == models.StatusRead
	})
	if n := changedEvents(e, orgID, plain.ID.String()); n != 0 {
		t.Fatalf("%d message.changed events for a message no document projects", n)
	}
}
