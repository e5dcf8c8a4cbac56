package console

import (
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/webhooks"
)

// TestConsoleWebhooks drives the webhook pages against the real system: a
// webhook created with events, a secret and a header; Send test; a failed
// delivery of a real event shown with what was sent and answered, then
// redelivered; the secret never shown again; a Manager (webhooks:read)
// offered no change; and a delete that asks first.
func TestConsoleWebhooks(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	admin := f.Admin
	rcv := apptest.NewReceiver(t)
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("created with events, a secret and a header; Send test", func(t *testing.T) {
		p.in(t)
		p.click("link", "Webhooks")
		p.see("No webhook yet")
		p.click("link", "New webhook")
		p.seeRole("heading", "New webhook")
		p.fill("Name", "CRM")
		p.fill("URL", rcv.URL)
		p.fill("Secret", "s3cret")
		p.toggle("contact.created A new contact is created")
		p.click("button", "Add a header")
		p.fill("Header 1 name", "Authorization")
		p.fill("Header 1 value", "Bearer abc")
		p.axe("new webhook")
		p.click("button", "Create webhook")
		p.see("Webhook CRM created.")
		p.seeRole("heading", "CRM")
		p.see("A secret is set (it is never shown)")
		if v := eval[string](p, `labelled('Secret').value`); v != "" {
			t.Fatalf("the secret field shows %q after saving", v)
		}
		p.click("button", "Send test")
		p.waitUntil("the test's result", `/Test delivered: the endpoint answered 200 in \d+ ms\./.test(pageText())`)
		got := rcv.Got()
		if len(got) != 1 || got[0].Header.Get(webhooks.SignatureHeader) != webhooks.Signature("s3cret", got[0].Body) ||
			got[0].Header.Get("Authorization") != "Bearer abc" {
			t.Fatalf("the test delivery: %d requests %v", len(got), got)
		}
	})

	t.Run("a failed delivery shows what was sent and is redelivered", func(t *testing.T) {
		p.in(t)
		rcv.FailNext(500, 500, 500)
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550007788", "name": "Ida"}, admin.Auth()).Expect(t, 201)
		apptest.Eventually(t, 15*time.Second, "three failed attempts", func() bool { return len(rcv.Got()) >= 4 })
		p.click("button", "Refresh")
		p.waitUntil("the failed attempts listed", `!!document.querySelector('button[aria-label$="(contact.created)"]')`)
		id := eval[string](p, `(() => { const b = [...document.querySelectorAll('button')].find((b) => /^Redeliver attempt \d+ \(contact\.created\)$/.test(b.getAttribute('aria-label') || '')); return b ? b.getAttribute('aria-label').match(/\d+/)[0] : '' })()`)
		if id == "" {
			t.Fatal("no Redeliver button for the failed event")
		}
		p.click("button", "Show the request and response of attempt "+id)
		p.see(`"phone_number": "+15550007788"`)
		p.see("Response")
		p.shot("delivery-log")
		p.axe("delivery log")
		before := len(rcv.Got())
		p.click("button", "Redeliver attempt "+id+" (contact.created)")
		p.see("Redelivered contact.created: the endpoint answered 200.")
		p.see("redelivery")
		if n := len(rcv.Got()) - before; n != 1 {
			t.Fatalf("the redelivery made %d requests", n)
		}
		if last := rcv.Got()[len(rcv.Got())-1]; !strings.Contains(string(last.Body), "+15550007788") {
			t.Fatalf("redelivered %s", last.Body)
		}
	})

	t.Run("a Manager reads webhooks but is offered no change", func(t *testing.T) {
		m := signInAs(t, b, f, "manager", "manager@wharf.test", "Manager")
		m.click("link", "Webhooks")
		m.click("link", "CRM")
		m.seeRole("heading", "CRM")
		m.see("Delivery log")
		for _, c := range [][2]string{{"button", "Send test"}, {"button", "Delete webhook"}, {"button", "Save webhook"}} {
			if m.has(c[0], c[1]) {
				t.Fatalf("a Manager is shown %s %q", c[0], c[1])
			}
		}
		if eval[bool](m, `!!document.querySelector('button[aria-label^="Redeliver"]')`) {
			t.Fatal("a Manager is shown Redeliver")
		}
		if !eval[bool](m, `labelled('Name').matches(':disabled')`) {
			t.Fatal("a Manager can type in the webhook's form")
		}
		m.open("/console/webhooks/new")
		m.seeRole("heading", "You cannot open this page")
	})

	t.Run("delete asks first", func(t *testing.T) {
		p.in(t)
		p.click("button", "Delete webhook")
		p.seeRole("heading", "Delete this webhook?")
		p.click("button", "Keep the webhook")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Delete this webhook?')`)
		p.click("button", "Delete webhook")
		p.waitUntil("the dialog open", `!!byRole('heading', 'Delete this webhook?')`)
		// The dialog's button, not the page's (inert behind it) of the same name.
		if !eval[bool](p, `(() => { const b = [...document.querySelectorAll('dialog[open] button')].find((b) => norm(b.textContent) === 'Delete webhook'); if (b) b.click(); return !!b })()`) {
			t.Fatal("no Delete webhook button in the dialog")
		}
		p.see("Webhook CRM deleted.")
		p.see("No webhook yet")
	})
}
