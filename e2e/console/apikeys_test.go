package console

import (
	"strings"
	"testing"

	"wharf/internal/apptest"
)

// TestConsoleAPIKeys drives the API keys page: a key created, shown once
// with a copy button, working against the API, gone from the page once
// dismissed; the API's refusal of a past expiry shown next to the form; an
// agent (no api_keys permission) not shown the page; and a revoke that asks
// first and takes effect at once.
func TestConsoleAPIKeys(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	var key string

	t.Run("created and shown once", func(t *testing.T) {
		p.in(t)
		p.click("link", "API keys")
		p.see("No API key yet")
		p.fill("Name", "Shop backend")
		p.click("button", "Create API key")
		p.see("API key Shop backend created")
		key = eval[string](p, `document.querySelector('input[aria-label="The new API key"]').value`)
		if !strings.HasPrefix(key, "whm_") || len(key) < 20 {
			t.Fatalf("the key shown is %q", key)
		}
		p.axe("api key created")
		p.shot("created")
		p.click("button", "Copy key")
		p.seeRole("button", "Copied")
		f.Do("GET", "/api/contacts", nil, apptest.APIKey(key)).Expect(t, 200)
		p.click("button", "Done")
		p.waitUntil("the key gone", `!pageText().includes(`+js(key)+`)`)
		p.seeRole("button", "Revoke Shop backend")
		p.reload()
		p.seeRole("button", "Revoke Shop backend")
		if eval[bool](p, `pageText().includes(`+js(key)+`)`) {
			t.Fatal("the key shows again after a reload")
		}
	})

	t.Run("a past expiry is refused next to the form", func(t *testing.T) {
		p.in(t)
		p.fill("Name", "Old")
		eval[bool](p, `(() => { const e = labelled('Expires'); e.value = '2020-01-01T10:00'; e.dispatchEvent(new Event('input', { bubbles: true })); return true })()`)
		p.click("button", "Create API key")
		p.see("expires_at must be in the future")
		if p.has("button", "Revoke Old") {
			t.Fatal("a refused key is listed")
		}
	})

	t.Run("an agent is not shown API keys", func(t *testing.T) {
		a := signInAs(t, b, f, "agent", "agent@wharf.test", "Agent")
		a.seeRole("link", "Overview")
		if a.has("link", "API keys") {
			t.Fatal("an agent is shown API keys in the navigation")
		}
		a.open("/console/api-keys")
		a.seeRole("heading", "You cannot open this page")
	})

	t.Run("revoke asks first and holds at once", func(t *testing.T) {
		p.in(t)
		p.click("button", "Revoke Shop backend")
		p.seeRole("heading", "Revoke this API key?")
		p.click("button", "Revoke key")
		p.see("API key Shop backend revoked.")
		p.see("No API key yet")
		if r := f.Do("GET", "/api/contacts", nil, apptest.APIKey(key)); r.Status != 401 {
			t.Fatalf("a revoked key answered %d", r.Status)
		}
	})
}
