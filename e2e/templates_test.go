package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

type templateOut struct {
	ID                 string           `json:"id"`
	Name               string           `json:"name"`
	Status             string           `json:"status"`
	ProviderTemplateID string           `json:"provider_template_id"`
	RejectedReason     string           `json:"rejected_reason"`
	ParameterFormat    string           `json:"parameter_format"`
	Components         []map[string]any `json:"components"`
}

func body(text string) map[string]any { return map[string]any{"type": "BODY", "text": text} }

func TestTemplateValidationStoresAndSubmitsNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	base := func() map[string]any {
		return map[string]any{"account_id": f.accountID, "name": "order_update", "language": "en_US", "category": "UTILITY",
			"components":    []any{body("Hi {{1}}, order {{2}}")},
			"sample_values": []any{map[string]any{"component": "BODY", "index": 1, "value": "Ann"}, map[string]any{"component": "BODY", "index": 2, "value": "42"}}}
	}
	with := func(k string, v any) map[string]any { m := base(); m[k] = v; return m }
	cases := []struct {
		body map[string]any
		want string
	}{
		{with("name", "Order-Update"), "lowercase"},
		{with("language", "english"), "language"},
		{with("category", "PROMO"), "category"},
		{with("account_id", nil), "account_id"},
		{with("components", []any{}), "BODY"},
		{with("components", []any{map[string]any{"type": "FOOTER", "text": "x"}}), "BODY"},
		{with("components", []any{body("a"), body("b")}), "twice"},
		{with("components", []any{body("x"), map[string]any{"type": "HEADER", "format": "TEXT", "text": strings.Repeat("h", 61)}}), "HEADER text"},
		{with("components", []any{body("x"), map[string]any{"type": "HEADER", "format": "AUDIO"}}), "HEADER format"},
		{with("components", []any{body("x"), map[string]any{"type": "FOOTER", "text": "Hi {{1}}"}}), "FOOTER"},
		{with("components", []any{body("Hi {{1}} and {{3}}")}), "in order"},
		{with("components", []any{body("Hi {{name}}")}), "named"},
		{with("components", []any{body("x"), map[string]any{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "CALL_ME", "text": "x"}}}}), "type must be"},
		{with("components", []any{body("x"), map[string]any{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "URL", "text": "Go", "url": "https://x.com/{{1}}/y"}}}}), "end"},
		{with("components", []any{body("x"), map[string]any{"type": "BUTTONS", "buttons": make([]any, 11)}}), "1 to 10"},
		{with("parameter_format", "weird"), "parameter_format"},
		{with("sample_values", []any{map[string]any{"component": "BODY", "index": 1, "value": "Ann"}}), "BODY {{2}}"},
		{with("components", []any{body("Hi {{1}}"), map[string]any{"type": "HEADER", "format": "TEXT", "text": "Dear {{1}}"},
			map[string]any{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "URL", "text": "Track", "url": "https://x.com/t/{{1}}"}}}}),
			"HEADER {{1}}, BUTTONS[0] url"},
	}
	for _, c := range cases {
		r := f.Do("POST", "/api/templates", c.body, f.admin.Auth())
		if r.Status != 400 || !strings.Contains(r.Message, c.want) {
			t.Errorf("want 400 %q, got %d %q", c.want, r.Status, r.Message)
		}
	}
	named := base()
	named["parameter_format"] = "named"
	named["components"] = []any{body("Hi {{first_name}} from {{city}}")}
	named["sample_values"] = []any{map[string]any{"component": "BODY", "param_name": "first_name", "value": "Ann"}}
	if r := f.Do("POST", "/api/templates", named, f.admin.Auth()); r.Status != 400 || !strings.Contains(r.Message, "BODY {{city}}") {
		t.Errorf("named missing sample: %d %q", r.Status, r.Message)
	}
	var n int64
	f.DB.Model(&models.Template{}).Count(&n)
	if n != 0 || f.Sim.CountRequests(platformsim.RequestFilter{Path: "message_templates"}) != 0 {
		t.Fatalf("%d templates stored or submitted by invalid requests", n)
	}
}

func TestTemplateLifecycleWithTheProvider(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, func(c *platformsim.Config) { c.TemplateApprovalDelay = 300 * time.Millisecond })
	f.StartWorker()
	create := func(name, format string, comps []any, samples []any) templateOut {
		var out templateOut
		f.Do("POST", "/api/templates", map[string]any{"account_id": f.accountID, "name": name, "language": "en_US", "category": "MARKETING",
			"parameter_format": format, "components": comps, "sample_values": samples}, f.admin.Auth()).Expect(t, 201).Into(t, &out)
		return out
	}
	promo := create("spring_promo", "", []any{
		map[string]any{"type": "HEADER", "format": "IMAGE"},
		body("Hi {{1}}, {{2}} off this week"),
		map[string]any{"type": "FOOTER", "text": "Reply STOP to opt out"},
		map[string]any{"type": "BUTTONS", "buttons": []any{
			map[string]any{"type": "URL", "text": "Shop", "url": "https://shop.example.com/{{1}}"},
			map[string]any{"type": "QUICK_REPLY", "text": "Not now"},
			map[string]any{"type": "PHONE_NUMBER", "text": "Call", "phone_number": "+15550001111"}}},
	}, []any{
		map[string]any{"component": "HEADER", "value": "https://cdn.example.com/spring.png"},
		map[string]any{"component": "BODY", "index": 1, "value": "Ann"},
		map[string]any{"component": "BODY", "index": 2, "value": "20%"},
		map[string]any{"component": "BUTTONS", "index": 0, "value": "spring"},
	})
	if promo.Status != "PENDING" || promo.ProviderTemplateID == "" || promo.ParameterFormat != "positional" {
		t.Fatalf("created %+v", promo)
	}
	reqs := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "message_templates"})
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"body_text":[["Ann","20%"]]`) ||
		!strings.Contains(string(reqs[0].Body), `"header_handle":["https://cdn.example.com/spring.png"]`) ||
		!strings.Contains(string(reqs[0].Body), `"example":["spring"]`) {
		t.Fatalf("submission %s", reqs[0].Body)
	}
	named := create("welcome_named", "named", []any{body("Welcome {{first_name}}")},
		[]any{map[string]any{"component": "BODY", "param_name": "first_name", "value": "Ann"}})
	reqs = f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "message_templates"})
	if !strings.Contains(string(reqs[1].Body), `"parameter_format":"NAMED"`) || !strings.Contains(string(reqs[1].Body), `"body_text_named_params"`) {
		t.Fatalf("named submission %s", reqs[1].Body)
	}
	rejected := create("reject_me", "", []any{body("Hello")}, nil)
	f.Do("POST", "/api/templates", map[string]any{"account_id": f.accountID, "name": "reject_me", "language": "en_US", "category": "MARKETING",
		"components": []any{body("Hello")}}, f.admin.Auth()).Expect(t, 409)

	// The provider's review arrives as webhooks.
	get := func(id string) templateOut {
		var out templateOut
		f.Do("GET", "/api/templates/"+id, nil, f.admin.Auth()).Expect(t, 200).Into(t, &out)
		return out
	}
	apptest.Eventually(t, 10*time.Second, "reviews", func() bool {
		return get(promo.ID).Status == "APPROVED" && get(named.ID).Status == "APPROVED" && get(rejected.ID).Status == "REJECTED"
	})
	if r := get(rejected.ID); r.RejectedReason != "INVALID_FORMAT" {
		t.Fatalf("rejection reason %q", r.RejectedReason)
	}

	// Approved templates are immutable; rejected ones are edited and resubmitted.
	f.Do("PUT", "/api/templates/"+promo.ID, map[string]any{"components": []any{body("x")}}, f.admin.Auth()).Expect(t, 409)
	f.Do("POST", "/api/templates/"+promo.ID+"/publish", nil, f.admin.Auth()).Expect(t, 409)
	f.Do("PUT", "/api/templates/"+rejected.ID, map[string]any{"components": []any{body("Hello {{1}}")}}, f.admin.Auth()).Expect(t, 400)
	var upd templateOut
	f.Do("PUT", "/api/templates/"+rejected.ID, map[string]any{"components": []any{body("Hello {{1}}")},
		"sample_values": []any{map[string]any{"component": "BODY", "index": 1, "value": "Bo"}}}, f.admin.Auth()).Expect(t, 200).Into(t, &upd)
	if upd.Status != "REJECTED" || upd.Components[0]["text"] != "Hello {{1}}" {
		t.Fatalf("updated %+v", upd)
	}
	var pub struct{ ID, Status string }
	f.Do("POST", "/api/templates/"+rejected.ID+"/publish", nil, f.admin.Auth()).Expect(t, 200).Into(t, &pub)
	if pub.Status != "PENDING" || f.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: rejected.ProviderTemplateID}) != 1 {
		t.Fatalf("publish %+v", pub)
	}

	// Lists with filters and paging.
	var list struct {
		Items []templateOut `json:"items"`
		Total int           `json:"total"`
		Limit int           `json:"limit"`
	}
	f.Do("GET", "/api/templates?status=approved", nil, f.admin.Auth()).Expect(t, 200).Into(t, &list)
	if list.Total != 2 || list.Limit != 20 {
		t.Fatalf("approved list %+v", list)
	}
	f.Do("GET", "/api/templates?category=UTILITY", nil, f.admin.Auth()).Expect(t, 200).Into(t, &list)
	if list.Total != 0 {
		t.Fatalf("category filter %d", list.Total)
	}
	f.Do("GET", "/api/templates?limit=1&page=2&account_id="+f.accountID, nil, f.admin.Auth()).Expect(t, 200).Into(t, &list)
	if list.Total != 3 || len(list.Items) != 1 {
		t.Fatalf("paging %+v", list)
	}

	// Delete is mirrored to the provider.
	f.Do("DELETE", "/api/templates/"+named.ID, nil, f.admin.Auth()).Expect(t, 200)
	dels := f.Sim.Requests(platformsim.RequestFilter{Method: "DELETE", Path: "message_templates"})
	if len(dels) != 1 || !strings.Contains(dels[0].Query, "name=welcome_named") || !strings.Contains(dels[0].Query, "hsm_id="+named.ProviderTemplateID) {
		t.Fatalf("provider delete %+v", dels)
	}
	f.Do("GET", "/api/templates/"+named.ID, nil, f.admin.Auth()).Expect(t, 404)
}

func TestTemplateSyncReadsEveryPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, func(c *platformsim.Config) { c.TemplateApprovalDelay = 10 * time.Millisecond })
	f.StartWorker()
	client := platform.New(f.SimServer.URL, "", nil)
	creds := platform.Creds{AccessToken: f.WABA.AccessToken, BusinessAccountID: f.WABA.ID}
	for i := 0; i < 130; i++ {
		comps, _ := json.Marshal([]map[string]any{{"type": "BODY", "text": fmt.Sprintf("Template %d", i)}})
		if _, err := client.CreateTemplate(context.Background(), creds, platform.TemplateDefinition{Name: fmt.Sprintf("synced_%03d", i),
			Language: "en_US", Category: "UTILITY", Components: comps}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	type counts struct{ Synced, New, Updated int }
	var c counts
	f.Do("POST", "/api/templates/sync", map[string]any{"account_id": f.accountID}, f.admin.Auth()).Expect(t, 200).Into(t, &c)
	if c != (counts{130, 130, 0}) {
		t.Fatalf("first sync %+v", c)
	}
	if pages := f.Sim.CountRequests(platformsim.RequestFilter{Method: "GET", Path: "message_templates"}); pages < 2 {
		t.Fatalf("%d list requests: paging not followed", pages)
	}
	f.Do("POST", "/api/templates/sync", map[string]any{"account_id": f.accountID}, f.admin.Auth()).Expect(t, 200).Into(t, &c)
	if c != (counts{130, 0, 0}) {
		t.Fatalf("second sync %+v", c)
	}
	// The local copy drifted (a lost webhook, a hand edit): sync repairs it.
	var one models.Template
	f.DB.Take(&one, "name = ?", "synced_007")
	f.DB.Model(&one).Updates(map[string]any{"status": "PENDING", "category": "MARKETING"})
	f.Do("POST", "/api/templates/sync", map[string]any{"account_id": f.accountID}, f.admin.Auth()).Expect(t, 200).Into(t, &c)
	if c != (counts{130, 0, 1}) {
		t.Fatalf("third sync %+v", c)
	}
	f.DB.Take(&one, "name = ?", "synced_007")
	if one.Status != "APPROVED" || one.Category != "UTILITY" {
		t.Fatalf("synced template %+v", one)
	}
	f.Do("POST", "/api/templates/sync", map[string]any{}, f.admin.Auth()).Expect(t, 400)
}
