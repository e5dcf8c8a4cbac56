package console

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"wharf/internal/apptest"
)

const (
	adminName   = "Administrator" // the bootstrap admin's name
	monitorLink = "Job monitor (opens in a new tab)"
	apiDocsLink = "API reference (opens in a new tab)"
)

// signIn signs in through the sign-in page and waits for the overview.
func signIn(p *page, email, password, name string) {
	p.t.Helper()
	p.seeRole("heading", "Sign in")
	p.fill("Email", email)
	p.fill("Password", password)
	p.click("button", "Sign in")
	p.seeRole("heading", "Welcome, "+name)
}

// signInAs creates a user of the role (password "password-123") and signs
// them in, in a tab of their own named name.
func signInAs(t *testing.T, b *browser, f *apptest.Fixture, name, email, role string) *page {
	t.Helper()
	f.CreateUser(f.Admin.Auth(), email, role)
	p := b.newPage(t, name)
	p.open("/console/")
	signIn(p, email, "password-123", "User "+email)
	return p
}

// submitDialog presses the open dialog's submit button (the form's own
// button, not a page button of the same name behind the dialog).
func (p *page) submitDialog() {
	p.t.Helper()
	if !eval[bool](p, `(() => { const b = document.querySelector('dialog[open] button[type=submit]'); if (b) b.click(); return !!b })()`) {
		p.fatalf("%s: no submit button in an open dialog", p.name)
	}
}

// refreshCookie is the browser's session cookie for the api, "" when none.
func refreshCookie(p *page) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitFor)
	defer cancel()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.base + "/api/auth/refresh"}})
	if err != nil {
		p.t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if c.Name == "wharf_refresh" {
			if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Path != "/api/auth" {
				p.t.Errorf("session cookie flags: %+v", c)
			}
			return c.Value
		}
	}
	return ""
}

func meAvailable(t *testing.T, e *apptest.Env, auth apptest.Auth) bool {
	var me struct {
		IsAvailable bool `json:"is_available"`
	}
	e.Do("GET", "/api/me", nil, auth).Expect(t, 200).Into(t, &me)
	return me.IsAvailable
}

// TestConsoleShell drives the console's shell in Chromium against the real
// system, step by step as people use it: signing in (wrong, then right),
// the shell, deep links and reloads, availability, switching organization,
// signing out, what a plain agent sees, a session that ends, and the
// sign-in lockout's wait. Every page gets an accessibility check; no page
// may request anything outside the api's origin (checked as each ends).
func TestConsoleShell(t *testing.T) {
	requireBrowser(t)
	e := apptest.New(t, nil)
	e.StartWorker()
	b := startBrowser(t, e.Server.URL)
	admin := e.Admin()

	p := b.newPage(t, "admin") // the admin's tab, from sign-in to sign-out
	t.Run("the root leads to the sign-in page", func(t *testing.T) {
		p.in(t)
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := noFollow.Get(e.Server.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/console/" {
			t.Fatalf("GET /: %d to %q", res.StatusCode, res.Header.Get("Location"))
		}

		p.open("/")
		p.seeRole("heading", "Sign in")
		if got := p.path(); got != "/console/login" {
			t.Fatalf("the root led to %s", got)
		}
		p.waitUntil("labelled fields", `labelled('Email') && labelled('Password') && byRole('button', 'Sign in')`)
		p.axe("sign-in page")
		p.shot("signin-light")
		p.prefersDark(true)
		p.axe("sign-in page, dark")
		p.shot("signin-dark")
		p.prefersDark(false)
	})

	t.Run("a wrong password shows the API's message", func(t *testing.T) {
		p.in(t)
		p.fill("Email", apptest.AdminEmail)
		p.fill("Password", "not-the-password")
		p.click("button", "Sign in")
		p.seeRole("alert", "invalid email or password")
		if got := p.path(); got != "/console/login" {
			t.Fatalf("after a refused sign-in: %s", got)
		}
		p.axe("sign-in error")
		p.shot("signin-error")
	})

	t.Run("the right password opens the shell", func(t *testing.T) {
		p.in(t)
		p.fill("Password", apptest.AdminPassword)
		p.click("button", "Sign in")
		p.seeRole("heading", "Welcome, "+adminName)
		if got := p.path(); got != "/console/" {
			t.Fatalf("signed in at %s", got)
		}
		p.see("You are signed in as " + apptest.AdminEmail + ", Admin in Bootstrap Org.")
		// A super admin sees the job monitor; everyone the API reference.
		p.seeRole("link", monitorLink)
		p.seeRole("link", apiDocsLink)
		p.seeRole("link", "Overview")
		p.seeRole("button", "Sign out")
		// The tokens are out of JavaScript's reach: the access token in
		// memory, the refresh token in an HttpOnly cookie.
		if leaked := eval[bool](p, `document.cookie.includes('wharf_refresh') || /eyJ|wrt_/.test(JSON.stringify(localStorage) + JSON.stringify(sessionStorage))`); leaked {
			t.Fatal("a token is readable by the page's script or kept in storage")
		}
		if refreshCookie(p) == "" {
			t.Fatal("no session cookie after sign-in")
		}
		p.axe("overview")
		p.shot("overview-light")
		p.choose("Theme", "Dark")
		p.waitUntil("dark theme", `document.documentElement.dataset.theme === 'dark'`)
		p.axe("overview, dark")
		p.shot("overview-dark")
		p.choose("Theme", "System")
	})

	t.Run("a deep link survives a reload", func(t *testing.T) {
		p.in(t)
		p.open("/console/reports/2026?page=2")
		p.seeRole("heading", "Page not found")
		p.see("There is no page at /console/reports/2026.")
		p.reload()
		p.seeRole("heading", "Page not found")
		p.seeRole("button", "Sign out") // the session came back from the cookie
		p.axe("page not found")
		p.shot("not-found")
		p.click("link", "Go to the overview")
		p.seeRole("heading", "Welcome, "+adminName)
	})

	t.Run("a deep link opens after signing in", func(t *testing.T) {
		q := b.newPage(t, "deep-link")
		q.open("/console/somewhere/deep")
		q.seeRole("heading", "Sign in")
		if got := q.path(); got != "/console/login?next=/somewhere/deep" {
			t.Fatalf("the sign-in page is at %s", got)
		}
		q.fill("Email", apptest.AdminEmail)
		q.fill("Password", apptest.AdminPassword)
		q.click("button", "Sign in")
		q.seeRole("heading", "Page not found")
		if got := q.path(); got != "/console/somewhere/deep" {
			t.Fatalf("after signing in: %s", got)
		}
	})

	t.Run("availability", func(t *testing.T) {
		p.in(t)
		if !eval[bool](p, `labelled('Available').checked`) {
			t.Fatal("a new admin shows as unavailable")
		}
		p.toggle("Available")
		apptest.Eventually(t, waitFor, "the API to record the admin away", func() bool { return !meAvailable(t, e, admin.Auth()) })
		p.reload()
		p.seeRole("heading", "Welcome, "+adminName)
		if eval[bool](p, `labelled('Available').checked`) {
			t.Fatal("after a reload the toggle shows available")
		}
		p.toggle("Available")
		apptest.Eventually(t, waitFor, "the API to record the admin available", func() bool { return meAvailable(t, e, admin.Auth()) })
	})

	t.Run("switching organization", func(t *testing.T) {
		p.in(t)
		e.Do("POST", "/api/organizations", map[string]string{"name": "Harbour Two"}, admin.Auth()).Expect(t, 201)
		e.Do("PUT", "/api/org/settings", map[string]string{"timezone": "Asia/Kolkata", "date_format": "DD.MM.YYYY"}, admin.Auth()).Expect(t, 200)
		p.reload()
		p.choose("Organization", "Harbour Two")
		p.see("Switched to Harbour Two.")
		p.see("You are signed in as " + apptest.AdminEmail + ", Admin in Harbour Two.")
		p.reload() // the cookie now holds the session in Harbour Two
		p.see("Admin in Harbour Two.")
		if got := eval[string](p, `labelled('Organization').selectedOptions[0].text`); got != "Harbour Two" {
			t.Fatalf("after a reload the switcher shows %q", got)
		}
		p.shot("switched")

		// Back home, times show in the organization's zone and format.
		p.choose("Organization", "Bootstrap Org")
		p.see("Admin in Bootstrap Org.")
		var me struct {
			CreatedAt time.Time `json:"created_at"`
		}
		e.Do("GET", "/api/me", nil, admin.Auth()).Expect(t, 200).Into(t, &me)
		zone, _ := time.LoadLocation("Asia/Kolkata")
		p.see("Time zone Asia/Kolkata")
		p.see("Account created " + me.CreatedAt.In(zone).Format("02.01.2006 15:04"))
	})

	t.Run("signing out", func(t *testing.T) {
		p.in(t)
		p.click("button", "Sign out")
		p.seeRole("heading", "Sign in")
		if c := refreshCookie(p); c != "" {
			t.Fatal("the session cookie survived signing out")
		}
		p.reload()
		p.seeRole("heading", "Sign in")
		p.open("/console/")
		p.seeRole("heading", "Sign in")
	})

	agent := e.CreateUser(admin.Auth(), "agent@wharf.test", "Agent")
	a := b.newPage(t, "agent")
	t.Run("a plain agent sees only what they may use", func(t *testing.T) {
		a.in(t)
		a.open("/console/")
		signIn(a, "agent@wharf.test", "password-123", "User agent@wharf.test")
		a.see("You are signed in as agent@wharf.test, Agent in Bootstrap Org.")
		a.seeRole("link", apiDocsLink)
		if a.has("link", monitorLink) || strings.Contains(eval[string](a, `pageText()`), "Job monitor") {
			t.Fatal("an agent is shown the job monitor")
		}
		a.axe("agent's overview")
		a.shot("agent-overview")
	})

	t.Run("a session that ends says why", func(t *testing.T) {
		a.in(t)
		e.Do("PUT", "/api/users/"+agent.User.ID, map[string]any{"is_active": false}, admin.Auth()).Expect(t, 200)
		a.toggle("Available") // refused: the session is over
		a.seeRole("heading", "Your session has ended")
		// The refused request's own reason, which says more than the
		// refused refresh's ("refresh token has been revoked"), and no
		// other notice beside it.
		if msg := eval[string](a, `norm(byRole('dialog', null).querySelector('p').textContent)`); msg != "user account is disabled" {
			t.Fatalf("the dialog gives %q as the reason", msg)
		}
		if toasts := eval[string](a, `norm(document.querySelector('[aria-live]').textContent)`); toasts != "" {
			t.Fatalf("besides the dialog: %q", toasts)
		}
		a.axe("session ended")
		a.shot("session-ended")
		a.click("button", "Sign in again")
		a.seeRole("heading", "Sign in")
	})

	t.Run("too many failed sign-ins show the wait", func(t *testing.T) {
		// The guard locks an (email, address) pair after ten failures; the
		// browser signs in from the same address as this test.
		for range 10 {
			e.Do("POST", "/api/auth/login", map[string]string{"email": "locked@wharf.test", "password": "guess"}, nil).Expect(t, 401)
		}
		l := b.newPage(t, "locked")
		l.open("/console/login")
		l.fill("Email", "locked@wharf.test")
		l.fill("Password", "another guess")
		l.click("button", "Sign in")
		l.see("too many failed sign-in attempts; retry in")
		l.see("You can try again in 1")
		if !eval[bool](l, `byRole('button', 'Sign in').disabled`) {
			t.Fatal("the sign-in button is usable during the wait")
		}
		l.axe("sign-in lockout")
		l.shot("lockout")
	})
}

// TestConsoleWaitsOutTheRateLimit: a request the rate limiter refuses is
// sent again once the wait is over, and the console says how long it waits.
func TestConsoleWaitsOutTheRateLimit(t *testing.T) {
	requireBrowser(t)
	// 20 a minute: one more every 3 s once the burst is spent.
	e := apptest.New(t, map[string]string{"RATE_LIMIT_PER_MINUTE": "20"})
	b := startBrowser(t, e.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	// Another client of the same user spends what is left of the allowance.
	admin := e.Admin()
	for i := 0; ; i++ {
		if e.Do("GET", "/api/me", nil, admin.Auth()).Status == http.StatusTooManyRequests {
			break
		}
		if i > 40 {
			t.Fatal("the rate limit never answered 429")
		}
	}
	p.toggle("Available")
	p.see("Too many requests. Trying again in")
	p.shot("rate-limit-wait")
	p.axe("rate-limit wait")
	apptest.Eventually(t, waitFor, "the toggle's request to go through after the wait", func() bool {
		var available bool
		e.DB.Raw(`SELECT is_available FROM users WHERE email = ?`, apptest.AdminEmail).Scan(&available)
		return !available
	})
	p.waitUntil("the notice to go", `!pageText().includes('Too many requests.')`)
	if eval[bool](p, `labelled('Available').checked`) {
		t.Fatal("the toggle shows available after its change went through")
	}
}
