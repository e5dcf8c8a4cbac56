package console

import (
	"testing"

	"github.com/chromedp/chromedp"

	"wharf/internal/apptest"
)

// errorOf is the text the control labelled label is described by (its hint
// and the error next to it): where the API's refusal must show.
func errorOf(p *page, label string) string {
	p.t.Helper()
	return eval[string](p, `(() => { const e = labelled(`+js(label)+`); if (!e) return ''; return (e.getAttribute('aria-describedby') || '').split(' ').filter(Boolean).map((id) => norm((document.getElementById(id) || {}).textContent)).join(' | ') })()`)
}

// seeErrorAt waits for text to show next to the control labelled label.
func seeErrorAt(p *page, label, text string) {
	p.t.Helper()
	p.waitUntil("the error at "+label, `(() => { const e = labelled(`+js(label)+`); return !!e && e.getAttribute('aria-invalid') === 'true' && (e.getAttribute('aria-describedby') || '').split(' ').some((id) => norm((document.getElementById(id) || {}).textContent).includes(`+js(text)+`)) })()`)
}

// clickInDialog presses the open dialog's button of this name (not the page's
// button of the same name, inert behind it).
func clickInDialog(p *page, name string) {
	p.t.Helper()
	p.waitUntil("the dialog's "+name, `!![...document.querySelectorAll('dialog[open] button')].find((b) => norm(b.textContent) === `+js(name)+`)`)
	if !eval[bool](p, `(() => { const b = [...document.querySelectorAll('dialog[open] button')].find((b) => norm(b.textContent) === `+js(name)+`); if (b) b.click(); return !!b })()`) {
		p.fatalf("%s: no %q button in the open dialog", p.name, name)
	}
}

type cannedRow struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Shortcut string `json:"shortcut"`
	Content  string `json:"content"`
	Category string `json:"category"`
	IsActive bool   `json:"is_active"`
}

// TestConsoleCanned drives the canned responses page: one added through the
// form, a taken shortcut refused under the Shortcut field, the category
// filter and search kept in the URL (and through a reload), an edit that
// makes a response inactive, a delete that asks first; an Agent
// (canned_responses:read only) sees the list without any control to change
// it.
func TestConsoleCanned(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	held := func() map[string]cannedRow {
		var out struct {
			CannedResponses []cannedRow `json:"canned_responses"`
		}
		f.Do("GET", "/api/canned-responses", nil, admin).Expect(t, 200).Into(t, &out)
		m := map[string]cannedRow{}
		for _, c := range out.CannedResponses {
			m[c.Name] = c
		}
		return m
	}

	t.Run("added through the form; a taken shortcut refused next to it", func(t *testing.T) {
		p.in(t)
		p.click("link", "Canned responses")
		p.seeRole("heading", "Canned responses")
		p.see("No canned response yet.")
		p.click("button", "New canned response")
		p.seeRole("heading", "New canned response")
		p.fill("Name", "Welcome")
		p.fill("Shortcut", "hi")
		p.choose("Category", "greeting")
		p.fill("Content", "Hello {{contact_name}}, how can we help?")
		p.axe("new canned response")
		p.submitDialog()
		p.see("Canned response Welcome added.")
		p.see("1 canned response")
		got := held()["Welcome"]
		if got.Shortcut != "hi" || got.Category != "greeting" || got.Content != "Hello {{contact_name}}, how can we help?" || !got.IsActive {
			t.Fatalf("the server holds %+v", got)
		}

		p.click("button", "New canned response")
		p.fill("Name", "Thanks")
		p.fill("Shortcut", "hi")
		p.choose("Category", "closing")
		p.fill("Content", "Thank you, have a good day!")
		p.submitDialog()
		seeErrorAt(p, "Shortcut", "Canned response with this shortcut already exists")
		if e := errorOf(p, "Name"); e != "" {
			t.Fatalf("the Name field shows %q", e)
		}
		p.fill("Shortcut", "thanks")
		p.submitDialog()
		p.see("Canned response Thanks added.")
		if got := held()["Thanks"]; got.Shortcut != "thanks" || got.Category != "closing" {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("filters in the URL", func(t *testing.T) {
		p.in(t)
		p.choose("Filter by category", "closing")
		p.waitUntil("the category in the URL", `location.search.includes('category=closing')`)
		p.waitUntil("only Thanks listed", `pageText().includes('Thank you, have a good day!') && !pageText().includes('how can we help')`)
		p.reload()
		p.waitUntil("still only Thanks after a reload", `pageText().includes('Thank you, have a good day!') && !pageText().includes('how can we help')`)
		p.open("/console/canned-responses?search=help")
		p.waitUntil("the search's result", `pageText().includes('how can we help') && !pageText().includes('Thank you, have a good day!')`)
		if v := eval[string](p, `labelled('Search').value`); v != "help" {
			t.Fatalf("the search box shows %q", v)
		}
		p.open("/console/canned-responses")
		p.see("2 canned responses")
	})

	t.Run("edited: content changed, made inactive", func(t *testing.T) {
		p.in(t)
		p.click("button", "Edit Welcome")
		p.seeRole("heading", "Edit Welcome")
		if v := eval[string](p, `labelled('Content').value`); v != "Hello {{contact_name}}, how can we help?" {
			t.Fatalf("the form shows the content %q", v)
		}
		p.fill("Content", "Hi {{contact_name}}! What can we do for you?")
		p.toggle("Active (offered to agents)")
		p.submitDialog()
		p.see("Canned response Welcome saved.")
		p.see("What can we do for you?")
		p.shot("canned")
		p.prefersDark(true)
		p.shot("canned-dark")
		p.axe("canned responses, dark")
		p.prefersDark(false)
		p.do("narrow window", chromedp.EmulateViewport(420, 860))
		p.shot("canned-narrow")
		p.do("wide window", chromedp.EmulateViewport(1280, 860))
		got := held()["Welcome"]
		if got.Content != "Hi {{contact_name}}! What can we do for you?" || got.IsActive || got.Shortcut != "hi" {
			t.Fatalf("the server holds %+v", got)
		}
		p.choose("Show", "Active only")
		p.waitUntil("the inactive one filtered out", `location.search.includes('active=only') && !pageText().includes('What can we do for you?')`)
		p.open("/console/canned-responses")
	})

	t.Run("delete asks first", func(t *testing.T) {
		p.in(t)
		p.click("button", "Delete Thanks")
		p.seeRole("heading", "Delete this canned response?")
		clickInDialog(p, "Keep it")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Delete this canned response?')`)
		if _, ok := held()["Thanks"]; !ok {
			t.Fatal("Keep it deleted the response")
		}
		p.click("button", "Delete Thanks")
		clickInDialog(p, "Delete canned response")
		p.see("Canned response Thanks deleted.")
		if _, ok := held()["Thanks"]; ok {
			t.Fatal("the server still holds Thanks")
		}
	})

	t.Run("an Agent reads them but is offered no change", func(t *testing.T) {
		a := signInAs(t, b, f, "agent", "agent@wharf.test", "Agent")
		a.click("link", "Canned responses")
		a.see("What can we do for you?")
		for _, c := range []string{"New canned response", "Edit Welcome", "Delete Welcome"} {
			if a.has("button", c) {
				t.Fatalf("an Agent is shown %q", c)
			}
		}
		a.axe("canned responses, read only")
	})
}
