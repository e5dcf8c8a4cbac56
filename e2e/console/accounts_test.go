package console

import (
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleAccounts drives the accounts page against the real system and
// the provider simulator: an account connected by hand (a refused id shown
// next to its field first), tested, registered with a generated PIN (a
// malformed PIN refused next to its field), subscribed to the provider's
// webhooks, its messaging tier overridden;
// a broken token's error shown in the list after Test; a Manager
// (accounts:read) offered no change; an Agent refused the page; and a
// disconnect that asks first.
func TestConsoleAccounts(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	sales := f.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Acme Sales", AccessToken: "sales-token-0123456789",
		PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-010-0002", VerifiedName: "Acme Sales"}}})
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	type account struct {
		ID                    string `json:"id"`
		Name                  string `json:"name"`
		Status                string `json:"status"`
		MessagingTierOverride string `json:"messaging_tier_override"`
		LastError             string `json:"last_error"`
	}
	find := func(name string) *account {
		var out struct {
			Items []account `json:"items"`
		}
		f.Do("GET", "/api/accounts", nil, admin).Expect(t, 200).Into(t, &out)
		for _, a := range out.Items {
			if a.Name == name {
				return &a
			}
		}
		return nil
	}
	// inDialog clicks the open dialog's button of that text (the page's
	// own, inert behind it, may have the same name).
	inDialog := func(t *testing.T, text string) {
		t.Helper()
		if !eval[bool](p, `(() => { const b = [...document.querySelectorAll('dialog[open] button')].find((b) => norm(b.textContent) === `+js(text)+`); if (b) b.click(); return !!b })()`) {
			t.Fatalf("no %q button in the dialog", text)
		}
	}

	t.Run("connected by hand, tested, registered, its tier overridden", func(t *testing.T) {
		p.in(t)
		p.click("link", "Accounts")
		p.seeRole("heading", "Accounts")
		p.see("Main")
		p.see("GREEN")
		p.click("button", "Connect an account")
		p.fill("Name", "Sales")
		p.fill("Phone number ID", "not-a-number")
		p.fill("Business account ID", sales.ID)
		p.fill("Access token", sales.AccessToken)
		p.axe("connect an account")
		inDialog(t, "Connect account")
		// The refusal shows under the field it names.
		p.waitUntil("the error next to the phone number id", `(() => { const i = labelled('Phone number ID'); const d = i && i.getAttribute('aria-describedby'); return !!d && d.split(' ').some((id) => (document.getElementById(id)?.textContent || '').includes("must be the provider's numeric ids")) })()`)
		if find("Sales") != nil {
			t.Fatal("a refused account is stored")
		}
		p.fill("Phone number ID", sales.PhoneNumbers[0].ID)
		inDialog(t, "Connect account")
		p.see("Account Sales connected.")
		p.see("Webhook verify token")
		a := find("Sales")
		if a == nil || a.Status != "pending" {
			t.Fatalf("the connected account: %+v", a)
		}

		p.click("button", "Test Sales")
		p.see("Sales is connected: +1 555-010-0002 (Acme Sales), quality GREEN.")
		if a := find("Sales"); a.Status != "active" {
			t.Fatalf("after a working Test the account is %s", a.Status)
		}

		p.click("button", "Register Sales")
		p.seeRole("heading", "Register the number")
		p.fill("Two-step verification PIN", "12")
		inDialog(t, "Register number")
		p.see("pin must be 6 digits")
		p.fill("Two-step verification PIN", "")
		inDialog(t, "Register number")
		p.waitUntil("the generated PIN shown", `/Its two-step verification PIN is \d{6}/.test(pageText())`)
		p.see("Sales is registered and active.")
		var detail struct {
			Status     string  `json:"status"`
			VerifiedAt *string `json:"verified_at"`
		}
		f.Do("GET", "/api/accounts/"+a.ID, nil, admin).Expect(t, 200).Into(t, &detail)
		if detail.Status != "active" || detail.VerifiedAt == nil {
			t.Fatalf("after Register: %+v", detail)
		}
		registered := false
		for _, ba := range f.Sim.BusinessAccounts() {
			for _, ph := range ba.PhoneNumbers {
				registered = registered || (ph.ID == sales.PhoneNumbers[0].ID && ph.Registered)
			}
		}
		if !registered {
			t.Fatal("the simulator's number is not registered")
		}

		p.click("button", "Subscribe Sales to webhooks")
		p.see("Sales is subscribed: the provider sends its messages and statuses to Wharf.")
		apps := 0
		for _, ba := range f.Sim.BusinessAccounts() {
			if ba.ID == sales.ID {
				apps = len(ba.SubscribedApps)
			}
		}
		if apps != 1 {
			t.Fatalf("after Subscribe the business account has %d subscribed apps", apps)
		}

		p.choose("Messaging tier of Sales", "TIER_10K")
		p.see("Sales is now paced as TIER_10K.")
		p.see("Override; the provider says TIER_1K.")
		if a := find("Sales"); a.MessagingTierOverride != "TIER_10K" {
			t.Fatalf("the override is %q", a.MessagingTierOverride)
		}
		p.shot("accounts")
		p.axe("accounts")
		p.prefersDark(true)
		p.shot("accounts-dark")
		p.axe("accounts, dark")
		p.prefersDark(false)
	})

	t.Run("a broken token's error shows after Test", func(t *testing.T) {
		p.in(t)
		f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"access_token": "wrong-token"}, admin).Expect(t, 200)
		p.click("button", "Test Main")
		p.waitUntil("the test's refusal", `/Main is not connected: .*190/.test(pageText())`)
		a := find("Main")
		if a.Status != "disconnected" || !strings.Contains(a.LastError, "190") {
			t.Fatalf("after a refused test: %+v", a)
		}
		// The list row shows the last error too.
		p.see(a.LastError)
		p.shot("accounts-error")
	})

	t.Run("a Manager reads accounts but is offered no change; an Agent is refused", func(t *testing.T) {
		f.CreateUser(admin, "manager@wharf.test", "Manager")
		m := b.newPage(t, "manager")
		m.open("/console/")
		signIn(m, "manager@wharf.test", "password-123", "User manager@wharf.test")
		m.click("link", "Accounts")
		m.see("Sales")
		m.see("TIER_10K")
		for _, c := range []string{"Connect an account", "Disconnect Sales", "Register Main", "Subscribe Main to webhooks"} {
			if m.has("button", c) {
				t.Fatalf("a Manager is shown %q", c)
			}
		}
		if eval[bool](m, `!!labelled('Messaging tier of Sales')`) {
			t.Fatal("a Manager is offered the tier override")
		}
		m.axe("accounts read-only")
		m.shot("accounts-manager")

		f.CreateUser(admin, "agent@wharf.test", "Agent")
		a := b.newPage(t, "agent")
		a.open("/console/")
		signIn(a, "agent@wharf.test", "password-123", "User agent@wharf.test")
		a.seeRole("link", "Overview")
		if a.has("link", "Accounts") {
			t.Fatal("an agent is shown Accounts in the navigation")
		}
		a.open("/console/accounts")
		a.seeRole("heading", "You cannot open this page")
		a.axe("accounts refused")
	})

	t.Run("disconnect asks first", func(t *testing.T) {
		p.in(t)
		p.click("button", "Disconnect Sales")
		p.seeRole("heading", "Disconnect this account?")
		p.click("button", "Keep the account")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Disconnect this account?')`)
		if find("Sales") == nil {
			t.Fatal("Keep the account deleted it")
		}
		p.click("button", "Disconnect Sales")
		p.waitUntil("the dialog open", `!!byRole('heading', 'Disconnect this account?')`)
		inDialog(t, "Disconnect account")
		p.see("Account Sales disconnected.")
		apptest.Eventually(t, 5*time.Second, "the row gone", func() bool { return !p.has("button", "Disconnect Sales") })
		if a := find("Sales"); a != nil {
			t.Fatalf("the disconnected account is still listed: %+v", a)
		}
	})
}
