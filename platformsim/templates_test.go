package platformsim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func (f *fixture) createTemplate(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	code, out := f.do(t, "POST", "/v21.0/"+f.ba.ID+"/message_templates", testToken, body)
	if code != 200 {
		t.Fatalf("create template: %d %v", code, out)
	}
	return out
}

func bodyComponent(text string) []any {
	return []any{map[string]any{"type": "BODY", "text": text}}
}

func TestTemplateApprovalWebhook(t *testing.T) {
	f := setup(t, Config{TemplateApprovalDelay: 20 * time.Millisecond})
	out := f.createTemplate(t, map[string]any{"name": "order_update", "language": "en_US", "category": "UTILITY",
		"components": bodyComponent("Order {{1}} shipped")})
	id, _ := out["id"].(string)
	if id == "" || out["status"] != "PENDING" || out["category"] != "UTILITY" {
		t.Fatalf("create answer %v", out)
	}
	rej := f.createTemplate(t, map[string]any{"name": "promo_reject_me", "language": "en_US", "category": "MARKETING",
		"components": bodyComponent("Buy")})

	waitFor(t, 2*time.Second, "two template webhooks", func() bool { return len(f.recv.hooks("message_template_status_update")) == 2 })
	events := map[string]map[string]any{}
	for _, h := range f.recv.hooks("message_template_status_update") {
		if h.Entry[0].ID != f.ba.ID {
			t.Errorf("entry id %s", h.Entry[0].ID)
		}
		dec := json.NewDecoder(bytes.NewReader(h.Entry[0].Changes[0].Value))
		dec.UseNumber()
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		num, ok := v["message_template_id"].(json.Number)
		if !ok {
			t.Fatalf("message_template_id is %T, want a JSON number", v["message_template_id"])
		}
		events[num.String()] = v
	}
	if e := events[id]; e["event"] != "APPROVED" || e["message_template_name"] != "order_update" || e["message_template_language"] != "en_US" {
		t.Errorf("approval event %v", e)
	}
	if e := events[rej["id"].(string)]; e["event"] != "REJECTED" || e["reason"] != "INVALID_FORMAT" {
		t.Errorf("rejection event %v", e)
	}

	code, got := f.do(t, "GET", "/v21.0/"+id, testToken, nil)
	if code != 200 || got["status"] != "APPROVED" || got["parameter_format"] != "POSITIONAL" {
		t.Errorf("GET template: %d %v", code, got)
	}
	code, list := f.do(t, "GET", "/v21.0/"+f.ba.ID+"/message_templates?status=REJECTED", testToken, nil)
	data := list["data"].([]any)
	if code != 200 || len(data) != 1 || data[0].(map[string]any)["rejected_reason"] != "INVALID_FORMAT" {
		t.Errorf("rejected list: %d %v", code, list)
	}

	// Duplicate name and language.
	code, dup := f.do(t, "POST", "/v21.0/"+f.ba.ID+"/message_templates", testToken, map[string]any{
		"name": "order_update", "language": "en_US", "category": "UTILITY", "components": bodyComponent("x")})
	if e := wantError(t, code, dup, 400, 100); e["error_subcode"] != float64(2388023) {
		t.Errorf("duplicate: %v", e)
	}
	// Another language is another template.
	f.createTemplate(t, map[string]any{"name": "order_update", "language": "pt_BR", "category": "UTILITY", "components": bodyComponent("x")})

	for name, body := range map[string]map[string]any{
		"bad name":     {"name": "Order Update", "language": "en_US", "category": "UTILITY", "components": bodyComponent("x")},
		"bad category": {"name": "a", "language": "en_US", "category": "PROMO", "components": bodyComponent("x")},
		"no language":  {"name": "a", "category": "UTILITY", "components": bodyComponent("x")},
		"no body":      {"name": "a", "language": "en_US", "category": "UTILITY", "components": []any{map[string]any{"type": "FOOTER", "text": "x"}}},
	} {
		code, out := f.do(t, "POST", "/v21.0/"+f.ba.ID+"/message_templates", testToken, body)
		if code != 400 {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}

	// Manual status change posts the webhook at once.
	code, err := f.sim.SetTemplateStatus(context.Background(), id, "PAUSED", "")
	if err != nil || code != 200 {
		t.Fatalf("SetTemplateStatus: %d %v", code, err)
	}
	_, got = f.do(t, "GET", "/v21.0/"+id+"?fields=status", testToken, nil)
	if got["status"] != "PAUSED" || len(got) != 2 {
		t.Errorf("after pause: %v", got)
	}

	// Delete one language, then the name.
	code, _ = f.do(t, "DELETE", "/v21.0/"+f.ba.ID+"/message_templates?name=order_update&hsm_id="+id, testToken, nil)
	if code != 200 {
		t.Fatalf("delete by hsm_id: %d", code)
	}
	code, _ = f.do(t, "DELETE", "/v21.0/"+f.ba.ID+"/message_templates?name=order_update", testToken, nil)
	if code != 200 {
		t.Fatalf("delete by name: %d", code)
	}
	code, out = f.do(t, "DELETE", "/v21.0/"+f.ba.ID+"/message_templates?name=order_update", testToken, nil)
	wantError(t, code, out, 400, 100)
}

func TestTemplatePaging(t *testing.T) {
	f := setup(t, Config{TemplateApprovalDelay: -1})
	for i := range 60 {
		f.createTemplate(t, map[string]any{"name": fmt.Sprintf("tmpl_%02d", i), "language": "en_US", "category": "MARKETING",
			"components": bodyComponent("Hello")})
	}
	seen := map[string]bool{}
	url := "/v21.0/" + f.ba.ID + "/message_templates?limit=25"
	var sizes []int
	for url != "" {
		code, out := f.do(t, "GET", url, testToken, nil)
		if code != 200 {
			t.Fatalf("list: %d %v", code, out)
		}
		data := out["data"].([]any)
		sizes = append(sizes, len(data))
		for _, d := range data {
			m := d.(map[string]any)
			if seen[m["id"].(string)] {
				t.Fatalf("template %v listed twice", m["id"])
			}
			seen[m["id"].(string)] = true
			if m["status"] != "PENDING" || m["language"] != "en_US" || m["components"] == nil {
				t.Errorf("item %v", m)
			}
		}
		paging := out["paging"].(map[string]any)
		cursors := paging["cursors"].(map[string]any)
		if cursors["before"] == "" || cursors["after"] == "" {
			t.Errorf("cursors %v", cursors)
		}
		next, _ := paging["next"].(string)
		if next != "" && next[:len(f.srv.URL)] != f.srv.URL {
			t.Errorf("next %q is not a full URL", next)
		}
		url = next
	}
	if fmt.Sprint(sizes) != "[25 25 10]" || len(seen) != 60 {
		t.Errorf("pages %v, %d templates", sizes, len(seen))
	}
	// Filters.
	_, out := f.do(t, "GET", "/v21.0/"+f.ba.ID+"/message_templates?name=tmpl_5", testToken, nil)
	if n := len(out["data"].([]any)); n != 10 {
		t.Errorf("name filter: %d", n)
	}
	_, out = f.do(t, "GET", "/v21.0/"+f.ba.ID+"/message_templates?status=APPROVED", testToken, nil)
	if n := len(out["data"].([]any)); n != 0 || out["paging"] != nil {
		t.Errorf("status filter: %v", out)
	}
}

func TestTemplateSendValidation(t *testing.T) {
	f := setup(t, Config{TemplateApprovalDelay: time.Millisecond, SentAfter: -1, DeliveredAfter: -1, ReadAfter: -1})
	f.createTemplate(t, map[string]any{"name": "order_conf", "language": "en_US", "category": "UTILITY",
		"components": bodyComponent("Hi {{1}}, order {{2}} is ready ({{1}})")})
	f.createTemplate(t, map[string]any{"name": "welcome", "language": "en_US", "category": "MARKETING", "parameter_format": "NAMED",
		"components": []any{map[string]any{"type": "BODY", "text": "Hi {{first_name}} from {{city}}",
			"example": map[string]any{"body_text_named_params": []any{map[string]any{"param_name": "first_name", "example": "Jo"}}}}}})
	f.createTemplate(t, map[string]any{"name": "promo_image", "language": "en_US", "category": "MARKETING",
		"components": []any{map[string]any{"type": "HEADER", "format": "IMAGE"}, map[string]any{"type": "BODY", "text": "Look"}}})
	f.createTemplate(t, map[string]any{"name": "slow_review", "language": "en_US", "category": "UTILITY", "components": bodyComponent("x")})
	waitFor(t, time.Second, "approvals", func() bool { return len(f.recv.hooks("message_template_status_update")) == 4 })
	// A template under review again cannot be sent.
	_, err := f.sim.SetTemplateStatus(context.Background(), f.templateID(t, "slow_review"), "PENDING", "")
	if err != nil {
		t.Fatal(err)
	}

	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	named := func(name, s string) map[string]any {
		return map[string]any{"type": "text", "parameter_name": name, "text": s}
	}
	send := func(name, lang string, components ...any) (int, map[string]any) {
		return f.do(t, "POST", "/v21.0/"+f.phone+"/messages", testToken, map[string]any{
			"messaging_product": "whatsapp", "to": "15551234567", "type": "template",
			"template": map[string]any{"name": name, "language": map[string]any{"code": lang}, "components": components}})
	}
	body := func(params ...any) map[string]any { return map[string]any{"type": "body", "parameters": params} }
	header := map[string]any{"type": "header", "parameters": []any{map[string]any{"type": "image", "image": map[string]any{"link": "https://example.com/a.png"}}}}

	cases := []struct {
		name string
		code int
		send func() (int, map[string]any)
	}{
		{"positional ok", 0, func() (int, map[string]any) { return send("order_conf", "en_US", body(text("Jo"), text("42"))) }},
		{"unknown name", 132001, func() (int, map[string]any) { return send("nope", "en_US", body()) }},
		{"unknown language", 132001, func() (int, map[string]any) { return send("order_conf", "fr_FR", body(text("Jo"), text("42"))) }},
		{"not approved", 132001, func() (int, map[string]any) { return send("slow_review", "en_US") }},
		{"too few params", 132000, func() (int, map[string]any) { return send("order_conf", "en_US", body(text("Jo"))) }},
		{"named on positional", 132012, func() (int, map[string]any) {
			return send("order_conf", "en_US", body(named("a", "Jo"), named("b", "42")))
		}},
		{"named ok", 0, func() (int, map[string]any) {
			return send("welcome", "en_US", body(named("city", "Lisbon"), named("first_name", "Jo")))
		}},
		{"named without names", 132012, func() (int, map[string]any) { return send("welcome", "en_US", body(text("Jo"), text("Lisbon"))) }},
		{"named wrong name", 132012, func() (int, map[string]any) {
			return send("welcome", "en_US", body(named("first_name", "Jo"), named("town", "Lisbon")))
		}},
		{"named count", 132000, func() (int, map[string]any) { return send("welcome", "en_US", body(named("first_name", "Jo"))) }},
		{"header image ok", 0, func() (int, map[string]any) { return send("promo_image", "en_US", header) }},
		{"header image missing", 132000, func() (int, map[string]any) { return send("promo_image", "en_US") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := c.send()
			if c.code == 0 {
				if code != 200 {
					t.Fatalf("%d %v", code, out)
				}
				return
			}
			wantError(t, code, out, 400, c.code)
		})
	}
	// The pricing category of a template send is the template's.
	f.sim.UpdateConfig(func(c *Config) { c.SentAfter = 0 })
	code, _ := send("welcome", "en_US", body(named("city", "Lisbon"), named("first_name", "Jo")))
	if code != 200 {
		t.Fatal(code)
	}
	waitFor(t, time.Second, "sent status", func() bool { return len(f.recv.messageHooks()) == 1 })
	if st := f.recv.messageHooks()[0].Statuses[0]; st.Pricing == nil || st.Pricing.Category != "marketing" {
		t.Errorf("pricing %+v", st.Pricing)
	}
}

func (f *fixture) templateID(t *testing.T, name string) string {
	t.Helper()
	_, out := f.do(t, "GET", "/v21.0/"+f.ba.ID+"/message_templates?name="+name, testToken, nil)
	for _, d := range out["data"].([]any) {
		if m := d.(map[string]any); m["name"] == name {
			return m["id"].(string)
		}
	}
	t.Fatalf("template %s not found", name)
	return ""
}
