package console

import (
	"testing"

	"wharf/internal/apptest"
)

type actionRow struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Icon         string         `json:"icon"`
	ActionType   string         `json:"action_type"`
	Config       map[string]any `json:"config"`
	IsActive     bool           `json:"is_active"`
	DisplayOrder int            `json:"display_order"`
}

// TestConsoleCustomActions drives the custom actions page: a webhook, a
// link and a JavaScript action added through the form, each first refused
// by the API with its message under the setting at fault (an unknown
// variable in the URL, a URL that is not http, code missing); an edit that
// keeps the webhook's masked header; a delete that asks first; an Agent
// (custom_actions:read) sees them without controls.
func TestConsoleCustomActions(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	held := func() map[string]actionRow {
		var out struct {
			CustomActions []actionRow `json:"custom_actions"`
		}
		f.Do("GET", "/api/custom-actions", nil, admin).Expect(t, 200).Into(t, &out)
		m := map[string]actionRow{}
		for _, a := range out.CustomActions {
			m[a.Name] = a
		}
		return m
	}

	t.Run("a webhook action: a bad variable refused under URL, then added", func(t *testing.T) {
		p.in(t)
		p.click("link", "Custom actions")
		p.seeRole("heading", "Custom actions")
		p.see("No custom action yet")
		p.click("button", "New custom action")
		p.seeRole("heading", "New custom action")
		p.fill("Name", "Open CRM")
		p.fill("URL", "https://crm.example.com/contacts/{{contact.nope}}")
		p.click("button", "Add a header")
		p.fill("Header 1 name", "Authorization")
		p.fill("Header 1 value", "Bearer s3cret")
		p.fill("Body", `{"phone": "{{contact.phone_number}}", "agent": "{{user.email}}"}`)
		p.axe("new webhook action")
		p.submitDialog()
		seeErrorAt(p, "URL", "unknown variable {{contact.nope}}")
		p.shot("customaction-error")
		p.fill("URL", "https://crm.example.com/contacts/{{contact.id}}")
		p.submitDialog()
		p.see("Custom action Open CRM added.")
		got := held()["Open CRM"]
		h, _ := got.Config["headers"].(map[string]any)
		if got.ActionType != "webhook" || got.Config["url"] != "https://crm.example.com/contacts/{{contact.id}}" || got.Config["method"] != "POST" ||
			got.Config["body"] != `{"phone": "{{contact.phone_number}}", "agent": "{{user.email}}"}` || h["Authorization"] == nil || !got.IsActive {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("a link action: a non-http URL refused under URL, then added", func(t *testing.T) {
		p.in(t)
		p.click("button", "New custom action")
		p.fill("Name", "Order page")
		p.choose("Kind", "Link")
		p.choose("Icon", "link")
		p.fill("Order", "2")
		p.fill("URL", "ftp://shop.example.com/orders")
		p.toggle("Open in a new tab")
		p.submitDialog()
		seeErrorAt(p, "URL", "http")
		p.fill("URL", "https://shop.example.com/orders?phone={{contact.phone_number}}")
		p.submitDialog()
		p.see("Custom action Order page added.")
		got := held()["Order page"]
		if got.ActionType != "url" || got.Icon != "link" || got.DisplayOrder != 2 || got.Config["open_in_new_tab"] != false ||
			got.Config["url"] != "https://shop.example.com/orders?phone={{contact.phone_number}}" {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("a JavaScript action: code required, then added", func(t *testing.T) {
		p.in(t)
		p.click("button", "New custom action")
		p.fill("Name", "Greet")
		p.choose("Kind", "JavaScript")
		p.submitDialog()
		seeErrorAt(p, "Code", "config.code is required")
		p.fill("Code", "return 'Hello ' + context.contact.name")
		p.submitDialog()
		p.see("Custom action Greet added.")
		if got := held()["Greet"]; got.ActionType != "javascript" || got.Config["code"] != "return 'Hello ' + context.contact.name" {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("edited: the masked header kept", func(t *testing.T) {
		p.in(t)
		p.click("button", "Edit Open CRM")
		p.seeRole("heading", "Edit Open CRM")
		if v := eval[string](p, `labelled('Header 1 value').value`); v == "Bearer s3cret" || v == "" {
			t.Fatalf("the header's value is shown as %q", v)
		}
		p.choose("Method", "PUT")
		p.submitDialog()
		p.see("Custom action Open CRM saved.")
		p.see("PUT https://crm.example.com/contacts/{{contact.id}}")
		p.shot("customactions")
		got := held()["Open CRM"]
		h, _ := got.Config["headers"].(map[string]any)
		if got.Config["method"] != "PUT" || h["Authorization"] == nil || h["Authorization"] == "" {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("delete asks first", func(t *testing.T) {
		p.in(t)
		p.click("button", "Delete Greet")
		p.seeRole("heading", "Delete this custom action?")
		clickInDialog(p, "Keep it")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Delete this custom action?')`)
		p.click("button", "Delete Greet")
		clickInDialog(p, "Delete custom action")
		p.see("Custom action Greet deleted.")
		if _, ok := held()["Greet"]; ok {
			t.Fatal("the server still holds Greet")
		}
	})

	t.Run("an Agent reads them but is offered no change", func(t *testing.T) {
		a := signInAs(t, b, f, "agent", "agent@wharf.test", "Agent")
		a.click("link", "Custom actions")
		a.see("Order page")
		for _, c := range []string{"New custom action", "Edit Open CRM", "Delete Open CRM"} {
			if a.has("button", c) {
				t.Fatalf("an Agent is shown %q", c)
			}
		}
		a.axe("custom actions, read only")
	})
}
