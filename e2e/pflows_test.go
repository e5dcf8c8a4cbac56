package e2e_test

import (
	"context"
	"strings"
	"testing"

	"wharf/internal/apptest"
	"wharf/platform"
	"wharf/platformsim"
)

type flowOut struct {
	ID               string           `json:"id"`
	ProviderFlowID   *string          `json:"provider_flow_id"`
	Name             string           `json:"name"`
	Status           string           `json:"status"`
	AccountID        string           `json:"account_id"`
	Categories       []string         `json:"categories"`
	JSONDefinition   map[string]any   `json:"json_definition"`
	ValidationErrors []map[string]any `json:"validation_errors"`
	NeedsSave        bool             `json:"needs_save"`
	CreatedAt        string           `json:"created_at"`
}

func flowDefinition(screen string) map[string]any {
	return map[string]any{"version": "6.0", "screens": []any{map[string]any{"id": screen, "title": "Pick one",
		"layout": map[string]any{"type": "SingleColumnLayout", "children": []any{
			map[string]any{"type": "RadioButtonsGroup", "name": "choice", "label": "Choose",
				"data-source": []any{map[string]any{"id": "a", "title": "A"}, map[string]any{"id": "b", "title": "B"}}},
			map[string]any{"type": "Footer", "label": "Send", "on-click-action": map[string]any{"name": "complete", "payload": map[string]any{}}},
		}}}}}
}

// A platform flow's life through the router and the simulator: created
// here, saved to the provider with validation errors (answered, flow stays
// DRAFT), fixed, published, deprecated; wrong-state transitions are refused
// without reaching the provider; sync imports a flow made at the provider;
// permissions follow the role matrix; another organization sees nothing.
func TestPlatformFlowsThroughTheRouter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	manager := f.CreateUser(admin, "flows-manager@example.test", "Manager").Auth()
	agent := f.CreateUser(admin, "flows-agent@example.test", "Agent").Auth()
	providerCalls := func(method, path string) int {
		return f.Sim.CountRequests(platformsim.RequestFilter{Method: method, Path: path})
	}

	create := map[string]any{"account_id": f.accountID, "name": "Feedback", "categories": []string{"SURVEY"},
		"json_definition": map[string]any{"version": "6.0", "screens": []any{map[string]any{"id": "NO_LAYOUT"}}}}
	f.Do("POST", "/api/flows", create, agent).Expect(t, 403)
	if r := f.Do("POST", "/api/flows", map[string]any{"account_id": f.accountID, "name": "x", "categories": []string{"PROMO"}}, manager).Expect(t, 400); !strings.Contains(r.Message, "categories") {
		t.Fatalf("bad category: %q", r.Message)
	}
	f.Do("POST", "/api/flows", map[string]any{"account_id": "00000000-0000-0000-0000-000000000001", "name": "x", "categories": []string{"OTHER"}}, manager).Expect(t, 404)
	var flow flowOut
	f.Do("POST", "/api/flows", create, manager).Expect(t, 201).Into(t, &flow)
	if flow.Status != "DRAFT" || flow.Name != "Feedback" || flow.ProviderFlowID != nil || flow.CreatedAt == "" {
		t.Fatalf("created %+v", flow)
	}

	// The agent reads; it changes nothing.
	var page struct {
		Items []flowOut `json:"items"`
		Total int       `json:"total"`
		Page  int       `json:"page"`
		Limit int       `json:"limit"`
	}
	f.Do("GET", "/api/flows?status=DRAFT&account_id="+f.accountID, nil, agent).Expect(t, 200).Into(t, &page)
	if page.Total != 1 || page.Limit != 20 || page.Page != 1 || page.Items[0].ID != flow.ID {
		t.Fatalf("list %+v", page)
	}
	f.Do("GET", "/api/flows?status=LIVE", nil, agent).Expect(t, 400)
	for _, c := range []struct{ method, path string }{
		{"PUT", "/api/flows/" + flow.ID}, {"DELETE", "/api/flows/" + flow.ID}, {"POST", "/api/flows/" + flow.ID + "/save-to-meta"},
		{"POST", "/api/flows/" + flow.ID + "/publish"}, {"POST", "/api/flows/" + flow.ID + "/deprecate"}, {"POST", "/api/flows/sync"},
	} {
		f.Do(c.method, c.path, map[string]any{"account_id": f.accountID}, agent).Expect(t, 403)
	}

	// Saved with errors: they are answered and the flow stays DRAFT.
	var saved struct {
		ProviderFlowID   string           `json:"provider_flow_id"`
		ValidationErrors []map[string]any `json:"validation_errors"`
		Status           string           `json:"status"`
	}
	f.Do("POST", "/api/flows/"+flow.ID+"/save-to-meta", nil, manager).Expect(t, 200).Into(t, &saved)
	if saved.ProviderFlowID == "" || len(saved.ValidationErrors) == 0 || saved.Status != "DRAFT" ||
		saved.ValidationErrors[0]["error"] != "MISSING_REQUIRED_PROPERTY" || saved.ValidationErrors[0]["line_start"] == nil {
		t.Fatalf("save with errors: %+v", saved)
	}
	if r := f.Do("POST", "/api/flows/"+flow.ID+"/publish", nil, manager).Expect(t, 400); !strings.Contains(r.Message, "validation errors") {
		t.Fatalf("publish with errors: %q", r.Message)
	}
	f.Do("POST", "/api/flows/"+flow.ID+"/deprecate", nil, manager).Expect(t, 409)

	f.Do("PUT", "/api/flows/"+flow.ID, map[string]any{"json_definition": flowDefinition("CHOOSE")}, manager).Expect(t, 200).Into(t, &flow)
	if !flow.NeedsSave || flow.JSONDefinition["screens"] == nil {
		t.Fatalf("updated %+v", flow)
	}
	f.Do("POST", "/api/flows/"+flow.ID+"/save-to-meta", nil, manager).Expect(t, 200).Into(t, &saved)
	if len(saved.ValidationErrors) != 0 {
		t.Fatalf("second save: %+v", saved)
	}
	var st struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	f.Do("POST", "/api/flows/"+flow.ID+"/publish", nil, manager).Expect(t, 200).Into(t, &st)
	if st.ID != flow.ID || st.Status != "PUBLISHED" {
		t.Fatalf("publish %+v", st)
	}
	publishes := providerCalls("POST", "/publish")
	f.Do("POST", "/api/flows/"+flow.ID+"/publish", nil, manager).Expect(t, 409)
	f.Do("PUT", "/api/flows/"+flow.ID, map[string]any{"name": "Renamed"}, manager).Expect(t, 409)
	f.Do("DELETE", "/api/flows/"+flow.ID, nil, admin).Expect(t, 409)
	f.Do("POST", "/api/flows/"+flow.ID+"/deprecate", nil, manager).Expect(t, 200).Into(t, &st)
	if st.Status != "DEPRECATED" {
		t.Fatalf("deprecate %+v", st)
	}
	deprecations := providerCalls("POST", "/deprecate")
	f.Do("POST", "/api/flows/"+flow.ID+"/deprecate", nil, manager).Expect(t, 409)
	f.Do("POST", "/api/flows/"+flow.ID+"/publish", nil, manager).Expect(t, 409)
	if providerCalls("POST", "/publish") != publishes || providerCalls("POST", "/deprecate") != deprecations || publishes != 1 || deprecations != 1 {
		t.Fatalf("refused transitions reached the provider: %d publishes, %d deprecations", publishes, deprecations)
	}
	f.Do("GET", "/api/flows/"+flow.ID, nil, agent).Expect(t, 200).Into(t, &flow)
	if flow.Status != "DEPRECATED" || flow.ProviderFlowID == nil || *flow.ProviderFlowID != saved.ProviderFlowID || flow.JSONDefinition["version"] != "6.0" {
		t.Fatalf("get %+v", flow)
	}

	// A flow made at the provider arrives by sync, with its JSON.
	client := platform.New(f.SimServer.URL, "", nil)
	cr := platform.Creds{AccessToken: f.WABA.AccessToken, BusinessAccountID: f.WABA.ID}
	ctx := context.Background()
	elsewhere, err := client.CreateFlow(ctx, cr, "Made elsewhere", []string{"LEAD_GENERATION"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.UploadFlowJSON(ctx, cr, elsewhere, []byte(`{"version":"6.0","screens":[{"id":"S","layout":{"type":"SingleColumnLayout","children":[]}}]}`)); err != nil {
		t.Fatal(err)
	}
	f.Do("POST", "/api/flows/sync", map[string]any{}, manager).Expect(t, 400)
	f.Do("POST", "/api/flows/sync", map[string]any{"account_id": "00000000-0000-0000-0000-000000000001"}, manager).Expect(t, 404)
	var synced struct{ Synced, New, Updated int }
	f.Do("POST", "/api/flows/sync", map[string]any{"account_id": f.accountID}, manager).Expect(t, 200).Into(t, &synced)
	if synced.Synced != 2 || synced.New != 1 || synced.Updated != 0 {
		t.Fatalf("sync %+v", synced)
	}
	f.Do("GET", "/api/flows?status=DRAFT", nil, agent).Expect(t, 200).Into(t, &page)
	if page.Total != 1 || page.Items[0].Name != "Made elsewhere" || *page.Items[0].ProviderFlowID != elsewhere {
		t.Fatalf("imported %+v", page)
	}
	imported := page.Items[0].ID

	// Another organization's admin finds none of it.
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Flows B"}, admin).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, admin).Expect(t, 200).Into(t, &inB)
	b := f.CreateUser(inB.Auth(), "flows-b@example.test", "Admin").Auth()
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/flows/" + imported}, {"PUT", "/api/flows/" + imported}, {"DELETE", "/api/flows/" + imported},
		{"POST", "/api/flows/" + imported + "/save-to-meta"}, {"POST", "/api/flows/" + imported + "/publish"},
		{"POST", "/api/flows/" + imported + "/deprecate"},
	} {
		f.Do(c.method, c.path, map[string]any{"name": "mine"}, b).Expect(t, 404)
	}
	f.Do("POST", "/api/flows/sync", map[string]any{"account_id": f.accountID}, b).Expect(t, 404)
	f.Do("GET", "/api/flows", nil, b).Expect(t, 200).Into(t, &page)
	if page.Total != 0 {
		t.Fatalf("organization B lists %d flows", page.Total)
	}

	// A DRAFT is deleted here and at the provider.
	f.Do("DELETE", "/api/flows/"+imported, nil, manager).Expect(t, 200)
	if _, err := client.GetFlow(ctx, cr, elsewhere); err == nil {
		t.Fatal("the deleted draft is still at the provider")
	}
	f.Do("GET", "/api/flows/"+imported, nil, manager).Expect(t, 404)
}

// A published flow goes to a contact as a flow message through the normal
// send path: stored as type flow, accepted by the provider with the flow's
// provider id and first screen, and its statuses tracked up to read.
func TestPlatformFlowMessageToAContact(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	agent := f.CreateUser(admin, "flow-sender@example.test", "Agent").Auth()
	f.StartWorker()
	contactID := f.contactFromIncoming(t, "15550190001", "Ann", "hello")

	var flow flowOut
	f.Do("POST", "/api/flows", map[string]any{"account_id": f.accountID, "name": "Pick", "categories": []string{"SURVEY"},
		"json_definition": flowDefinition("CHOOSE")}, admin).Expect(t, 201).Into(t, &flow)
	send := map[string]any{"contact_id": contactID, "body": "Which one?", "cta": "Choose"}
	if r := f.Do("POST", "/api/flows/"+flow.ID+"/send", send, agent).Expect(t, 409); !strings.Contains(r.Message, "only PUBLISHED flows can be sent") {
		t.Fatalf("draft send: %q", r.Message)
	}
	f.Do("POST", "/api/flows/"+flow.ID+"/save-to-meta", nil, admin).Expect(t, 200)
	f.Do("POST", "/api/flows/"+flow.ID+"/publish", nil, admin).Expect(t, 200)
	f.Do("GET", "/api/flows/"+flow.ID, nil, admin).Expect(t, 200).Into(t, &flow)

	f.Do("POST", "/api/flows/"+flow.ID+"/send", map[string]any{"body": "x", "cta": "y"}, agent).Expect(t, 400)
	f.Do("POST", "/api/flows/"+flow.ID+"/send", map[string]any{"contact_id": contactID, "cta": "Choose"}, agent).Expect(t, 400)
	f.Do("POST", "/api/flows/"+flow.ID+"/send", map[string]any{"contact_id": "00000000-0000-0000-0000-000000000001", "body": "x", "cta": "y"}, agent).Expect(t, 404)
	var sent struct {
		ID                string `json:"id"`
		PlatformMessageID string `json:"platform_message_id"`
		Status            string `json:"status"`
	}
	f.Do("POST", "/api/flows/"+flow.ID+"/send", send, agent).Expect(t, 200).Into(t, &sent)
	if sent.Status != "sent" || sent.PlatformMessageID == "" {
		t.Fatalf("sent %+v", sent)
	}
	m := f.waitStatus(t, sent.ID, "read")
	if m.Type != "flow" || m.Content.V["provider_flow_id"] != *flow.ProviderFlowID || m.Content.V["screen"] != "CHOOSE" {
		t.Fatalf("stored %+v", m)
	}
	var at []platformsim.Message
	for _, sm := range f.Sim.Messages(platformsim.MessageFilter{To: "15550190001"}) {
		if sm.ID == sent.PlatformMessageID {
			at = append(at, sm)
		}
	}
	if len(at) != 1 || !strings.Contains(string(at[0].Body), `"flow_id":"`+*flow.ProviderFlowID+`"`) ||
		!strings.Contains(string(at[0].Body), `"screen":"CHOOSE"`) {
		t.Fatalf("at the provider: %+v", at)
	}
	var msgs struct {
		Items []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"items"`
	}
	f.Do("GET", "/api/contacts/"+contactID+"/messages", nil, agent).Expect(t, 200).Into(t, &msgs)
	found := false
	for _, mm := range msgs.Items {
		found = found || (mm.ID == sent.ID && mm.Type == "flow")
	}
	if !found {
		t.Fatalf("the flow message is not in the conversation: %+v", msgs)
	}
}
