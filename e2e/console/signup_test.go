package console

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleSignup drives embedded signup: without the organization's
// provider app the page says so and offers the manual form only; with it,
// "Connect with the provider" loads the provider's script (the simulator's
// stand-in, the one outside URL the page may load, allowed by the page's own
// Content-Security-Policy), the script hands back a code, the API exchanges
// it, and the account is connected (read back through the API). Every other
// console page keeps the strict policy.
func TestConsoleSignup(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	script := f.SimServer.URL + "/_sim/embedded_signup/sdk.js"
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.allow(script)
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("the signup page alone allows the provider's script", func(t *testing.T) {
		csp := func(path string) string {
			t.Helper()
			r, err := http.Get(f.Server.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			_ = r.Body.Close()
			return r.Header.Get("Content-Security-Policy")
		}
		if got := csp("/console/accounts/signup"); !strings.Contains(got, "script-src 'self' "+f.SimServer.URL+";") {
			t.Fatalf("the signup page's policy: %q", got)
		}
		for _, path := range []string{"/console/", "/console/accounts", "/console/organizations"} {
			if got := csp(path); strings.Contains(got, f.SimServer.URL) || !strings.Contains(got, "script-src 'self';") {
				t.Fatalf("%s's policy: %q", path, got)
			}
		}
	})

	t.Run("without the provider app: the manual form only", func(t *testing.T) {
		p.in(t)
		p.click("link", "Accounts")
		p.seeRole("heading", "Accounts")
		followLink(p, "Embedded signup", "/console/accounts/signup")
		p.seeRole("heading", "Embedded signup")
		p.seeRole("heading", "The provider app is not configured")
		if p.has("button", "Connect with the provider") {
			t.Fatal("embedded signup offered without the provider app")
		}
		p.axe("signup not configured")
		p.shot("signup-not-configured")
		followLink(p, "Connect an account by hand", "/console/accounts?connect=1")
		p.seeRole("heading", "Connect an account")
		p.seeRole("dialog", "")
	})

	t.Run("button, script, code, exchange: the account is connected", func(t *testing.T) {
		p.in(t)
		f.Do("PUT", "/api/org/settings", map[string]any{"provider_app_id": platformsim.DefaultAppID, "provider_config_id": "cfg-7",
			"provider_app_secret": f.AppSecret}, admin).Expect(t, 200)
		fresh := f.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Harbour Fresh",
			PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-010-0077", VerifiedName: "Harbour Fresh"}}})
		f.Sim.AddSignupCode(platformsim.OAuthCode{Code: "signup-code-1", AccessToken: "signup-user-token", WABAIDs: []string{fresh.ID}})

		p.open("/console/accounts/signup")
		p.seeRole("heading", "Embedded signup")
		p.seeRole("button", "Connect with the provider")
		p.see("The provider's script is loaded from " + script)
		p.fill("Account name", "Fresh line")
		p.axe("signup")
		p.click("button", "Connect with the provider")
		p.see("Fresh line is connected")
		p.see("+1 555-010-0077")
		p.shot("signup")

		var out struct {
			Items []struct {
				Name              string `json:"name"`
				PhoneNumberID     string `json:"phone_number_id"`
				BusinessAccountID string `json:"business_account_id"`
				Status            string `json:"status"`
			} `json:"items"`
		}
		f.Do("GET", "/api/accounts", nil, admin).Expect(t, 200).Into(t, &out)
		found := false
		for _, a := range out.Items {
			if a.Name == "Fresh line" {
				found = true
				if a.PhoneNumberID != fresh.PhoneNumbers[0].ID || a.BusinessAccountID != fresh.ID || a.Status != "active" {
					t.Fatalf("the connected account: %+v", a)
				}
			}
		}
		if !found {
			t.Fatalf("no account Fresh line: %+v", out.Items)
		}
		// The provider's subscription happened with the exchanged token.
		if n := f.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: fresh.ID + "/subscribed_apps"}); n != 1 {
			t.Fatalf("%d subscriptions of the new business account", n)
		}

		followLink(p, "Back to accounts", "/console/accounts")
		p.seeRole("heading", "Accounts")
		p.see("Fresh line")

		// Leaving the page by the navigation (the router's links) loads the
		// next page afresh: the relaxed policy stays with the signup page.
		p.open("/console/accounts/signup")
		p.seeRole("heading", "Embedded signup")
		eval[bool](p, `(window.signupDocument = true)`)
		p.click("link", "Accounts")
		newDocument(p)
		p.seeRole("heading", "Accounts")
		if got := p.path(); got != "/console/accounts" {
			t.Fatalf("after leaving the signup page: %s", got)
		}
	})

	t.Run("a closed provider window connects nothing", func(t *testing.T) {
		p.in(t)
		p.open("/console/accounts/signup") // no code queued: the stand-in answers as a closed window
		p.click("button", "Connect with the provider")
		p.see("The signup was not finished")
	})
}

// followLink goes where the link of that name leads, as a click on a plain
// link does: a new document (the signup page's policy is its document's, so
// the console reaches and leaves it by full page loads). It checks where
// the link leads first.
func followLink(p *page, name, want string) {
	p.t.Helper()
	p.seeRole("link", name)
	got := eval[string](p, `(() => { const a = byRole('link', `+js(name)+`); const u = new URL(a.href); return u.pathname + u.search })()`)
	if got != want {
		p.fatalf("%s: the link %q leads to %q, not %q", p.name, name, got, want)
	}
	p.open(got)
}

// newDocument waits until the page holds a new, loaded document (one
// without the signupDocument mark); evaluating during the navigation fails,
// which only means it is not there yet.
func newDocument(p *page) {
	p.t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(p.ctx, time.Second)
		fresh, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!window.signupDocument && document.readyState === 'complete'`))
		cancel()
		if err == nil && fresh {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.fatalf("%s: the page was not loaded afresh", p.name)
}
