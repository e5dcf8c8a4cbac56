package e2e_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// TestWharfMessageProjection: an Outgoing Platform Message shows what its
// core message shows as soon as the provider accepted the send, not at the
// first status webhook. The simulator sends no status webhook at all here,
// so the document can learn the provider's message id only from the core
// row (through the projector: the send's outbox event).
func TestWharfMessageProjection(t *testing.T) {
	e := apptest.NewWithSim(t, nil, func(c *platformsim.Config) { c.SentAfter, c.DeliveredAfter, c.ReadAfter = -1, -1, -1 })
	e.StartWorker()
	admin := e.Admin()
	c := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	var orgID string
	e.DB.Raw(`SELECT id FROM organizations ORDER BY created_at LIMIT 1`).Scan(&orgID)
	c.data("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "Main", "token": e.WABA.AccessToken,
		"phone_id": e.PhoneNumberID(), "business_id": e.WABA.ID, "app_id": "123", "webhook_verify_token": "wharf-verify",
		"is_default_outgoing": 1, "is_default_incoming": 1}, 201)
	apptest.Eventually(t, 10*time.Second, "core account active", func() bool {
		var core models.PlatformAccount
		return e.DB.Take(&core, "organization_id = ? AND name = ?", orgID, "Main").Error == nil && core.Status == models.AccountActive
	})

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
	for _, w := range e.Sim.WebhooksSince(0) {
		if strings.Contains(string(w.Body), `"statuses"`) {
			t.Fatalf("the simulator sent a status webhook: %s", w.Body)
		}
	}
	var core models.Message
	apptest.Eventually(t, 10*time.Second, "the core message sent", func() bool {
		return e.DB.Take(&core, "organization_id = ? AND platform_message_id = ?", orgID, sims[0].ID).Error == nil
	})
	// The document carries the provider's id and the core row's status.
	apptest.Eventually(t, 10*time.Second, "the document has the message_id", func() bool {
		got := c.data("GET", "/api/resource/Platform%20Message/"+url.PathEscape(name), nil, 200)
		return got["message_id"] == sims[0].ID && got["status"] == "sent" && got["core_message_id"] == core.ID.String()
	})
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
