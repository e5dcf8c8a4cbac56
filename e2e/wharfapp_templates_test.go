package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platform"
	"wharf/platformsim"
)

// wharfAccount creates a Platform Account for a simulator business account
// and waits for its core account to be active.
func wharfAccount(t *testing.T, e *apptest.SimEnv, c frappeClient, name string, ba platformsim.BusinessAccount, def bool) {
	t.Helper()
	in := map[string]any{"account_name": name, "token": ba.AccessToken, "phone_id": ba.PhoneNumbers[0].ID, "business_id": ba.ID,
		"app_id": "1", "webhook_verify_token": "verify-" + name}
	if def {
		in["is_default_outgoing"] = 1
	}
	c.data("POST", "/api/resource/Platform%20Account", in, 201)
	apptest.Eventually(t, 10*time.Second, "account "+name+" active", func() bool {
		var st string
		e.DB.Raw(`SELECT status FROM platform_accounts WHERE name = ?`, name).Scan(&st)
		return st == "active"
	})
}

// TestWharfAppTemplates: a Platform Template created as a document reaches
// the simulator and follows its review webhook (received on the
// framework's webhook path), is sent by send_message with parameters, and
// sync_templates reflects every page of every account's templates.
func TestWharfAppTemplates(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	e.Sim.SetWebhookURL(e.Server.URL + "/api/method/wharf.utils.webhook.webhook")
	admin := e.Admin()
	c := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	wharfAccount(t, e, c, "Main", e.WABA, true)

	// Refused before anything is stored or submitted.
	c.refused("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": "Bad Name", "template": "x"}, 417,
		"ValidationError", "lowercase letters and underscores")
	c.refused("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": "no_category", "template": "x",
		"category": "SOMETHING"}, 417, "ValidationError", "category")

	doc := c.data("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": "order_ready",
		"language_code": "en_US", "category": "UTILITY", "template": "Hello {{1}}, order {{2}} is ready", "footer": "Acme",
		"buttons": []map[string]any{{"button_type": "Quick Reply", "button_label": "Thanks"}, {"button_type": "URL",
			"button_label": "Track", "url": "https://acme.example/track"}}}, 201)
	name := doc["name"].(string)
	var got map[string]any
	apptest.Eventually(t, 30*time.Second, "template submitted and approved", func() bool {
		got = c.data("GET", "/api/resource/Platform%20Template/"+url.PathEscape(name), nil, 200)
		return got["template_id"] != nil && got["status"] == "APPROVED"
	})
	if got["platform_account"] != "Main" {
		t.Errorf("template doc %v", got)
	}
	creds := platform.Creds{AccessToken: e.WABA.AccessToken, BusinessAccountID: e.WABA.ID}
	client := platform.New(e.SimServer.URL, "", nil)
	all, err := client.AllTemplates(context.Background(), creds)
	if err != nil || len(all) != 1 || all[0].ID != got["template_id"] || !strings.Contains(string(all[0].Components), `"QUICK_REPLY"`) ||
		!strings.Contains(string(all[0].Components), `"FOOTER"`) {
		t.Fatalf("simulator templates %+v, %v", all, err)
	}
	// A later review decision follows too (REJECTED through the webhook).
	// Sending it first, while APPROVED.
	user := "15550003333"
	e.Incoming(platformsim.Incoming{From: user, Type: "text", Text: "hi"})
	sent := c.do("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "template": name,
		"parameters": []string{"Ann", "A-17"}}, 200)["message"].(map[string]any)
	// Accepted by the provider: "sent", or already a later status when the
	// simulator's status webhook was applied before the answer was read.
	if st := sent["status"]; st != "sent" && st != "delivered" && st != "read" {
		t.Fatalf("template send_message: %v", sent)
	}
	sims := e.Sim.Messages(platformsim.MessageFilter{To: user})
	if len(sims) != 1 || sims[0].Type != "template" || !strings.Contains(string(sims[0].Body), "A-17") ||
		!strings.Contains(string(sims[0].Body), "order_ready") {
		t.Fatalf("simulator got %+v", sims)
	}
	m := c.data("GET", "/api/resource/Platform%20Message/"+sent["name"].(string), nil, 200)
	if m["content_type"] != "template" || m["message_type"] != "Template" || m["template"] != name {
		t.Fatalf("template message doc %v", m)
	}
	// Missing parameters: refused, nothing sent.
	c.refused("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "template": name,
		"parameters": []string{"Ann"}}, 417, "ValidationError", "")
	if n := len(e.Sim.Messages(platformsim.MessageFilter{To: user})); n != 1 {
		t.Fatalf("%d sends after a refused one", n)
	}
	if code, err := e.Sim.SetTemplateStatus(context.Background(), got["template_id"].(string), "REJECTED", "INVALID_FORMAT"); err != nil || code != 200 {
		t.Fatalf("set template status: %d %v", code, err)
	}
	apptest.Eventually(t, 30*time.Second, "template REJECTED from the webhook", func() bool {
		return c.data("GET", "/api/resource/Platform%20Template/"+url.PathEscape(name), nil, 200)["status"] == "REJECTED"
	})

	// sync_templates: two accounts, the second with more than a page (100)
	// of templates at the provider.
	second := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Second", AccessToken: "token-second-sync",
		PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-010-0003", VerifiedName: "Second"}}})
	wharfAccount(t, e, c, "Second", second, false)
	comps, _ := json.Marshal([]map[string]any{{"type": "BODY", "text": "Plain text"}})
	for i := range 105 {
		if _, err := client.CreateTemplate(context.Background(), platform.Creds{AccessToken: second.AccessToken, BusinessAccountID: second.ID},
			platform.TemplateDefinition{Name: fmt.Sprintf("bulk_%03d", i), Language: "en_US", Category: "MARKETING", Components: comps}); err != nil {
			t.Fatal(err)
		}
	}
	res := c.do("POST", "/api/method/wharf.api.sync_templates", map[string]any{}, 200)["message"].(map[string]any)
	if res["accounts"] != json.Number("2") || res["synced"] != json.Number("106") || res["new"] != json.Number("105") {
		t.Fatalf("sync_templates: %v", res)
	}
	count := c.do("GET", "/api/method/frappe.client.get_count?doctype="+url.QueryEscape("Platform Template")+"&filters="+
		url.QueryEscape(`[["platform_account","=","Second"]]`), nil, 200)["message"]
	if count != json.Number("105") {
		t.Fatalf("%v Platform Templates of Second, want 105", count)
	}
	// Synced documents are not submitted again: the provider still has 105.
	time.Sleep(300 * time.Millisecond)
	if all, _ := client.AllTemplates(context.Background(), platform.Creds{AccessToken: second.AccessToken, BusinessAccountID: second.ID}); len(all) != 105 {
		t.Fatalf("provider has %d templates of Second after the sync, want 105", len(all))
	}
	// A second sync changes nothing.
	res = c.do("POST", "/api/method/wharf.api.sync_templates", map[string]any{}, 200)["message"].(map[string]any)
	if res["new"] != json.Number("0") {
		t.Fatalf("second sync_templates: %v", res)
	}
	// An Agent cannot sync (create on Platform Template).
	agent := e.CreateUser(admin.Auth(), "agent-sync@example.com", "Agent")
	frappeClient{t: t, e: e.Env, auth: agent.Auth()}.refused("POST", "/api/method/wharf.api.sync_templates", map[string]any{}, 403,
		"PermissionError", "")
}
