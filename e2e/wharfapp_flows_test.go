package e2e_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"wharf/internal/apptest"
	"wharf/platform"
	"wharf/platformsim"
)

// TestWharfAppFlows: a Platform Flow published and deprecated with
// run_method reaches the simulator through the core flows domain, and a
// published one is sent by send_message (flow, flow_cta).
func TestWharfAppFlows(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	admin := e.Admin()
	c := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	wharfAccount(t, e, c, "Main", e.WABA, true)
	path := "/api/resource/Platform%20Flow"

	c.refused("POST", path, map[string]any{"flow_name": "bad", "category": "NOPE"}, 417, "ValidationError", "category")
	flow := c.data("POST", path, map[string]any{"flow_name": "Booking", "category": "APPOINTMENT_BOOKING",
		"screens": []map[string]any{{"screen_id": "DETAILS", "title": "Your details"}, {"screen_id": "SLOT", "title": "Pick a slot", "terminal": 1}},
		"fields": []map[string]any{
			{"screen_id": "DETAILS", "field_name": "full_name", "field_type": "TextInput", "label": "Name", "required": 1},
			{"screen_id": "SLOT", "field_name": "slot", "field_type": "Dropdown", "label": "Slot", "options": "Morning\nAfternoon"}}}, 201)
	if flow["status"] != "Draft" || flow["name"] != "Booking" {
		t.Fatalf("flow doc %v", flow)
	}
	doc := path + "/Booking"
	// A send of a flow not at the provider is refused.
	user := "15550004444"
	e.Incoming(platformsim.Incoming{From: user, Type: "text", Text: "hi"})
	c.refused("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "message": "Book", "flow": "Booking"}, 417,
		"ValidationError", "flow_id")
	// An Agent may not publish.
	agent := e.CreateUser(admin.Auth(), "agent-flow@example.com", "Agent")
	frappeClient{t: t, e: e.Env, auth: agent.Auth()}.refused("POST", doc, map[string]any{"run_method": "publish"}, 403, "PermissionError", "")
	c.refused("POST", doc, map[string]any{"run_method": "deprecate"}, 417, "ValidationError", "only a Published flow")

	res := c.do("POST", doc, map[string]any{"run_method": "publish"}, 200)["data"].(map[string]any)
	if res["status"] != "Published" || res["flow_id"] == "" {
		t.Fatalf("publish: %v", res)
	}
	got := c.data("GET", doc, nil, 200)
	flowID, _ := got["flow_id"].(string)
	if got["status"] != "Published" || flowID == "" || got["platform_account"] != "Main" {
		t.Fatalf("published doc %v", got)
	}
	client := platform.New(e.SimServer.URL, "", nil)
	creds := platform.Creds{AccessToken: e.WABA.AccessToken, BusinessAccountID: e.WABA.ID}
	pf, err := client.GetFlow(context.Background(), creds, flowID)
	if err != nil || pf.Status != "PUBLISHED" || pf.Name != "Booking" {
		t.Fatalf("simulator flow %+v %v", pf, err)
	}
	def, err := client.FlowJSON(context.Background(), creds, flowID)
	if err != nil || !strings.Contains(string(def), `"DETAILS"`) || !strings.Contains(string(def), `"Afternoon"`) {
		t.Fatalf("simulator flow JSON %s %v", def, err)
	}

	sent := c.do("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "message": "Book a slot",
		"flow": "Booking", "flow_cta": "Book now"}, 200)["message"].(map[string]any)
	sims := e.Sim.Messages(platformsim.MessageFilter{To: user})
	// The provider's statuses can overtake the answer (the simulator
	// delivers within milliseconds): sent or any later status is right.
	if !slices.Contains([]any{"sent", "delivered", "read"}, sent["status"]) || len(sims) != 1 || !strings.Contains(string(sims[0].Body), flowID) ||
		!strings.Contains(string(sims[0].Body), "Book now") {
		t.Fatalf("flow send %v: simulator got %+v", sent, sims)
	}
	if m := c.data("GET", "/api/resource/Platform%20Message/"+url.PathEscape(sent["name"].(string)), nil, 200); m["content_type"] != "flow" {
		t.Fatalf("flow message doc %v", m)
	}
	c.refused("POST", doc, map[string]any{"run_method": "publish"}, 417, "ValidationError", "only a Draft flow")

	res = c.do("POST", doc, map[string]any{"run_method": "deprecate"}, 200)["data"].(map[string]any)
	if res["status"] != "Deprecated" {
		t.Fatalf("deprecate: %v", res)
	}
	if pf, err := client.GetFlow(context.Background(), creds, flowID); err != nil || pf.Status != "DEPRECATED" {
		t.Fatalf("simulator flow after deprecate %+v %v", pf, err)
	}
	// Another organization does not see it.
	frappeClient{t: t, e: e.Env, auth: newOrg(t, e, admin, "flowother").Auth()}.refused("POST", doc, map[string]any{"run_method": "deprecate"},
		404, "DoesNotExistError", "")
}
