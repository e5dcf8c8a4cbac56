package console

import (
	"testing"

	"wharf/internal/apptest"
)

type pflowRow struct {
	ID               string           `json:"id"`
	Name             string           `json:"name"`
	Status           string           `json:"status"`
	Categories       []string         `json:"categories"`
	NeedsSave        bool             `json:"needs_save"`
	ProviderFlowID   *string          `json:"provider_flow_id"`
	ValidationErrors []map[string]any `json:"validation_errors"`
	JSONDefinition   map[string]any   `json:"json_definition"`
}

// TestConsolePlatformFlows drives the platform flows page against the real
// system and the provider's simulator: a draft created (bad JSON refused in
// the form, missing categories refused by the API next to them), saved to
// the provider with its validation errors shown under the flow and Publish
// held back, fixed, saved, published, deprecated after a confirmation, then
// deleted after one; the status filter kept in the URL; an Agent
// (flows:read) sees the list without controls.
func TestConsolePlatformFlows(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	admin := f.Admin.Auth()
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	held := func() pflowRow {
		var list struct {
			Items []pflowRow `json:"items"`
		}
		f.Do("GET", "/api/flows", nil, admin).Expect(t, 200).Into(t, &list)
		if len(list.Items) != 1 {
			t.Fatalf("the server holds %d flows", len(list.Items))
		}
		var out pflowRow
		f.Do("GET", "/api/flows/"+list.Items[0].ID, nil, admin).Expect(t, 200).Into(t, &out)
		return out
	}

	t.Run("created as a draft; bad JSON and missing categories refused next to them", func(t *testing.T) {
		p.in(t)
		p.click("link", "Platform flows")
		p.seeRole("heading", "Platform flows")
		p.see("No flow yet.")
		p.click("button", "New flow")
		p.seeRole("heading", "New flow")
		p.fill("Name", "Newsletter")
		p.fill("Flow JSON", `{"version": "6.0", "screens": [`)
		p.submitDialog()
		seeErrorAt(p, "Flow JSON", "The flow JSON is not valid")
		p.fill("Flow JSON", `{"version": "6.0", "screens": []}`)
		p.submitDialog()
		p.waitUntil("the categories' refusal", `(() => { const fs = [...document.querySelectorAll('dialog[open] fieldset')].find((x) => norm(x.querySelector('legend').textContent) === 'Categories'); return !!fs && norm(fs.textContent).includes('categories are required') })()`)
		p.toggle("Sign up")
		p.toggle("Lead generation")
		p.axe("new flow")
		p.submitDialog()
		p.see("Flow Newsletter created as a draft.")
		p.see("Not saved to the provider")
		got := held()
		if got.Status != "DRAFT" || len(got.Categories) != 2 || got.ProviderFlowID != nil {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("saved to the provider: its validation errors shown, Publish held back", func(t *testing.T) {
		p.in(t)
		p.click("button", "Save Newsletter to the provider")
		p.see("saved to the provider with 1 validation error")
		p.see("The property 'screens' must contain at least one screen.")
		p.shot("pflows-errors")
		if !eval[bool](p, `byRole('button', 'Publish Newsletter').disabled`) {
			t.Fatal("Publish is offered for a flow with validation errors")
		}
		if got := held(); got.ProviderFlowID == nil || len(got.ValidationErrors) != 1 {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("fixed, saved, published", func(t *testing.T) {
		p.in(t)
		p.click("button", "Edit Newsletter")
		p.seeRole("heading", "Edit Newsletter")
		p.fill("Flow JSON", `{"version": "6.0", "screens": [{"id": "WELCOME", "title": "Welcome", "layout": {"type": "SingleColumnLayout", "children": []}}]}`)
		p.submitDialog()
		p.see("Flow Newsletter saved.")
		p.see("Not saved to the provider")
		if got := held(); !got.NeedsSave || got.JSONDefinition["screens"] == nil {
			t.Fatalf("the server holds %+v", got)
		}
		p.click("button", "Save Newsletter to the provider")
		p.see("Flow Newsletter saved to the provider.")
		p.waitUntil("Publish offered", `!!byRole('button', 'Publish Newsletter') && !byRole('button', 'Publish Newsletter').disabled`)
		p.click("button", "Publish Newsletter")
		p.see("Flow Newsletter published.")
		p.seeRole("button", "Deprecate Newsletter")
		p.shot("pflows")
		p.axe("flows")
		if got := held(); got.Status != "PUBLISHED" {
			t.Fatalf("the server holds %+v", got)
		}
		if p.has("button", "Delete Newsletter") || p.has("button", "Edit Newsletter") {
			t.Fatal("a published flow offers Delete or Edit")
		}
	})

	t.Run("the status filter in the URL", func(t *testing.T) {
		p.in(t)
		p.choose("Filter by status", "Draft")
		p.waitUntil("the status in the URL", `location.search.includes('status=DRAFT')`)
		p.see("No flow matches.")
		p.reload()
		p.see("No flow matches.")
		p.open("/console/platform-flows?status=PUBLISHED")
		p.seeRole("button", "Deprecate Newsletter")
	})

	t.Run("an Agent reads them but is offered no change", func(t *testing.T) {
		a := signInAs(t, b, f, "agent", "agent@wharf.test", "Agent")
		a.click("link", "Platform flows")
		a.see("Newsletter")
		a.see("Published")
		for _, c := range []string{"New flow", "Deprecate Newsletter", "Sync from provider"} {
			if a.has("button", c) {
				t.Fatalf("an Agent is shown %q", c)
			}
		}
	})

	t.Run("deprecated, then deleted, each after asking", func(t *testing.T) {
		p.in(t)
		p.click("button", "Deprecate Newsletter")
		p.seeRole("heading", "Deprecate this flow?")
		clickInDialog(p, "Keep it published")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Deprecate this flow?')`)
		p.click("button", "Deprecate Newsletter")
		clickInDialog(p, "Deprecate flow")
		p.see("Flow Newsletter deprecated.")
		if got := held(); got.Status != "DEPRECATED" {
			t.Fatalf("the server holds %+v", got)
		}
		p.choose("Filter by status", "All statuses")
		p.click("button", "Delete Newsletter")
		clickInDialog(p, "Delete flow")
		p.see("Flow Newsletter deleted.")
		var list struct {
			Items []pflowRow `json:"items"`
		}
		f.Do("GET", "/api/flows", nil, admin).Expect(t, 200).Into(t, &list)
		if len(list.Items) != 0 {
			t.Fatalf("the server still holds %+v", list.Items)
		}
	})
}
