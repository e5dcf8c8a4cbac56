package console

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// TestConsoleTemplates drives the template pages against the real system and
// the provider's simulator: who sees them; a template written with a header,
// numbered placeholders, a footer and a button, previewed with its examples
// and submitted, which the provider approves; a refusal of the API shown
// next to the form; a rejected template showing the provider's reason in the
// list and on its page, the status filter in the URL; and a delete that asks
// first.
func TestConsoleTemplates(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	b := startBrowser(t, f.Server.URL)

	t.Run("an agent reads templates but is offered no change", func(t *testing.T) {
		a := signInAs(t, b, f, "agent", "agent@wharf.test", "Agent")
		a.click("link", "Templates")
		a.seeRole("link", "order_update")
		for _, c := range [][2]string{{"link", "New template"}, {"button", "Sync from provider"}, {"button", "Delete order_update (en_US)"}} {
			if a.has(c[0], c[1]) {
				t.Fatalf("an agent (templates:read only) is shown %s %q", c[0], c[1])
			}
		}
		a.open("/console/templates/new")
		a.seeRole("heading", "You cannot open this page")
	})

	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("the list", func(t *testing.T) {
		p.in(t)
		p.click("link", "Templates")
		p.seeRole("heading", "Templates")
		p.seeRole("link", "order_update")
		p.see("Approved")
		p.see("Hi {{1}}, your order {{2}} shipped")
		p.axe("templates list")
	})

	t.Run("written, previewed and submitted; the provider approves it", func(t *testing.T) {
		p.in(t)
		p.click("link", "New template")
		p.seeRole("heading", "New template")
		p.waitUntil("the account chosen", "labelled('Account').value !== ''")
		p.fill("Name", "parcel_update")
		p.choose("Category", "Utility")
		p.toggle("Header text")
		p.fill("Header", "Parcel news")
		p.fill("Body", "Hi {{1}}, your parcel {{2}} is on its way.")
		p.fill("Footer", "Reply STOP to opt out")
		p.click("button", "Add a button")
		p.fill("Button 1 text", "Track it")
		p.fill("Example for {{1}}", "Ann")
		p.fill("Example for {{2}}", "P-77")
		// The preview fills the placeholders with the examples.
		p.see("Hi Ann, your parcel P-77 is on its way.")
		p.see("Parcel news")
		p.see("Track it")
		p.axe("new template")
		p.shot("new-template")
		p.click("button", "Submit for review")
		p.see("Template parcel_update submitted for review.")
		p.seeRole("heading", "parcel_update")
		var tpl models.Template
		apptest.Eventually(t, 10*time.Second, "the template approved", func() bool {
			f.DB.Where("organization_id = ? AND name = ?", f.OrgID, "parcel_update").Take(&tpl)
			return tpl.Status == "APPROVED"
		})
		submitted := 0
		for _, r := range f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: f.WABA.ID + "/message_templates"}) {
			if strings.Contains(string(r.Body), `"parcel_update"`) {
				submitted++
			}
		}
		if submitted != 1 {
			t.Fatalf("parcel_update submitted %d times to the provider, want 1", submitted)
		}
		if len(tpl.SampleValues.V) != 2 {
			t.Fatalf("sample values %v", tpl.SampleValues.V)
		}
		p.reload()
		p.see("Approved templates cannot be changed")
		p.shot("approved-template")
	})

	t.Run("the API's refusal shows next to the form", func(t *testing.T) {
		p.in(t)
		p.open("/console/templates/new")
		// The only account is chosen once the accounts have loaded; a
		// submit before that is stopped by the browser (required).
		p.waitUntil("the account chosen", "!!labelled('Account') && labelled('Account').value !== ''")
		p.fill("Name", "order_update")
		p.fill("Body", "Hello again")
		p.click("button", "Submit for review")
		p.seeRole("alert", "")
		p.see("the account already has a template order_update in en_US")
		if p.path() != "/console/templates/new" {
			t.Fatalf("the page moved on after a refusal: %s", p.path())
		}
	})

	t.Run("a rejected template shows why; the status filter is in the URL", func(t *testing.T) {
		p.in(t)
		p.open("/console/templates/new")
		// The only account is chosen once the accounts have loaded; a
		// submit before that is stopped by the browser (required).
		p.waitUntil("the account chosen", "!!labelled('Account') && labelled('Account').value !== ''")
		p.fill("Name", "promo_reject_me")
		p.choose("Category", "Marketing")
		p.fill("Body", "Big sale today")
		p.click("button", "Submit for review")
		p.see("Template promo_reject_me submitted for review.")
		apptest.Eventually(t, 10*time.Second, "the template rejected", func() bool {
			var st string
			f.DB.Raw(`SELECT status FROM templates WHERE organization_id = ? AND name = 'promo_reject_me'`, f.OrgID).Scan(&st)
			return st == "REJECTED"
		})
		p.open("/console/templates")
		p.choose("Status", "Rejected")
		p.waitUntil("only rejected templates listed", `!byRole('link', 'order_update') && !!byRole('link', 'promo_reject_me')`)
		p.see("Reason: INVALID_FORMAT")
		if got := p.path(); got != "/console/templates?status=REJECTED" {
			t.Fatalf("the filter is not in the URL: %s", got)
		}
		p.shot("rejected-list")
		p.click("link", "promo_reject_me")
		p.see("The provider rejected this template.")
		p.see("Reason: INVALID_FORMAT")
		p.seeRole("button", "Submit for review")
		p.axe("rejected template")
	})

	t.Run("sync brings in a template made at the provider", func(t *testing.T) {
		p.in(t)
		comps, _ := json.Marshal([]any{map[string]any{"type": "BODY", "text": "Welcome aboard"}})
		if _, err := platform.New(f.SimServer.URL, "", nil).CreateTemplate(context.Background(),
			platform.Creds{AccessToken: f.WABA.AccessToken, BusinessAccountID: f.WABA.ID},
			platform.TemplateDefinition{Name: "made_elsewhere", Language: "en_US", Category: "UTILITY", Components: comps}); err != nil {
			t.Fatal(err)
		}
		p.open("/console/templates")
		p.seeRole("link", "order_update")
		if p.has("link", "made_elsewhere") {
			t.Fatal("a template only the provider has is listed before a sync")
		}
		p.click("button", "Sync from provider")
		p.waitUntil("the sync's result", `/Synced \d+ templates from the provider: 1 new/.test(pageText())`)
		p.seeRole("link", "made_elsewhere")
	})

	t.Run("delete asks first", func(t *testing.T) {
		p.in(t)
		p.open("/console/templates")
		p.click("button", "Delete promo_reject_me (en_US)")
		p.seeRole("heading", "Delete this template?")
		p.click("button", "Keep the template")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Delete this template?')`)
		p.seeRole("link", "promo_reject_me")
		p.click("button", "Delete promo_reject_me (en_US)")
		p.click("button", "Delete template")
		p.see("Template promo_reject_me deleted.")
		apptest.Eventually(t, 5*time.Second, "the row gone", func() bool { return !p.has("link", "promo_reject_me") })
		var n int64
		f.DB.Model(&models.Template{}).Where("organization_id = ? AND name = ?", f.OrgID, "promo_reject_me").Count(&n)
		if n != 0 {
			t.Fatalf("%d rows of the deleted template", n)
		}
		p.shot("list-after-delete")
	})
}
