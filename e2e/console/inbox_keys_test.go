package console

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleInboxKeys works the inbox from the keyboard alone (issue 23):
// "?" lists the shortcuts, j and k move between conversations, r focuses
// the reply box and Enter sends a reply that reaches the simulator, a "j"
// typed in the reply box stays text, Escape leaves the box, "/" searches;
// then Tab, Enter and Space reach the contact panel's actions (assignment,
// a custom action, the transfer, the notes) and the template dialog.
func TestConsoleInboxKeys(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	admin := f.Admin.Auth()
	const dana, eli = "15550009001", "15550009002"
	stored := func(from string, n int64) {
		t.Helper()
		apptest.Eventually(t, 10*time.Second, "the messages of "+from, func() bool {
			var got int64
			f.DB.Raw(`SELECT count(*) FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE c.phone_number = ?`, "+"+from).Scan(&got)
			return got == n
		})
	}
	// Eli first, Dana last: the list shows Dana on top.
	f.Incoming(platformsim.Incoming{From: eli, ProfileName: "Eli Brandt", Type: "text", Text: "Thanks, all good!"})
	stored(eli, 1)
	f.Incoming(platformsim.Incoming{From: dana, ProfileName: "Dana Reyes", Type: "text", Text: "Hello, is my order shipped?"})
	stored(dana, 1)
	var danaID, eliID string
	f.DB.Raw(`SELECT id FROM contacts WHERE phone_number = ?`, "+"+dana).Scan(&danaID)
	f.DB.Raw(`SELECT id FROM contacts WHERE phone_number = ?`, "+"+eli).Scan(&eliID)
	var hook struct{ ID string }
	f.Do("POST", "/api/custom-actions", map[string]any{"name": "Create ticket", "action_type": "webhook",
		"config": map[string]any{"url": "https://tickets.invalid/new?c={{contact.id}}"}}, admin).Expect(t, 201).Into(t, &hook)

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	p.open("/console/inbox")
	p.see("Hello, is my order shipped?")

	// press types keys as they come (a key down, its character, a key up).
	press := func(keys string) {
		t.Helper()
		p.do("press "+js(keys), chromedp.KeyEvent(keys))
	}
	// shortcut presses a key the page takes: DevTools sends a key's character
	// as an event of its own, which the page's preventDefault on the key down
	// cannot stop as it stops a real key's (the "r" would land in the reply
	// box it focuses); the character is left out, as a browser leaves it.
	shortcut := func(key string) {
		t.Helper()
		p.do("shortcut "+js(key), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			for _, r := range key {
				for _, k := range kb.Encode(r) {
					if k.Type == kb.KeyChar {
						continue
					}
					if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, *k); err != nil {
						return err
					}
				}
			}
			return nil
		}))
	}
	opened := func(id, text string) {
		t.Helper()
		p.waitUntil("the conversation "+id+" open", `new URLSearchParams(location.search).get('c') === `+js(id))
		p.waitUntil("the thread shows "+js(text), `(() => { const l = document.querySelector('[role=log]'); return !!l && norm(l.innerText).includes(`+js(text)+`) })()`)
	}
	// focused is the focused control's label (or accessible name).
	const focused = `(() => { const e = document.activeElement; if (!e || e === document.body) return '';
  const l = e.labels && e.labels[0]; return l ? norm(l.textContent) : named(e) })()`

	t.Run("? lists the shortcuts", func(t *testing.T) {
		p.in(t)
		p.seeRole("button", "Press ? for keyboard shortcuts")
		shortcut("?")
		p.seeRole("heading", "Keyboard shortcuts")
		p.see("Next conversation")
		p.see("Search the conversations")
		p.axe("shortcuts dialog")
		p.shot("inbox-shortcuts")
		shortcut(kb.Escape)
		p.waitUntil("the dialog closed", `!document.querySelector('dialog[open]')`)
	})

	t.Run("j and k move between conversations", func(t *testing.T) {
		p.in(t)
		shortcut("j")
		opened(danaID, "Hello, is my order shipped?")
		shortcut("j")
		opened(eliID, "Thanks, all good!")
		shortcut("k")
		opened(danaID, "Hello, is my order shipped?")
	})

	t.Run("r, then a reply sent with Enter; a j typed in the box stays text", func(t *testing.T) {
		p.in(t)
		shortcut("r")
		p.waitUntil("the reply box focused", `document.activeElement === labelled('Reply')`)
		press("j")
		p.waitUntil("the j in the box", `labelled('Reply').value === 'j'`)
		time.Sleep(300 * time.Millisecond) // what a switch would take
		if got := p.path(); !strings.Contains(got, "c="+danaID) {
			t.Fatalf("a j typed in the reply box switched the conversation: %s", got)
		}
		press(kb.Backspace)
		press("Yes, it ships today.")
		press("\r")
		apptest.Eventually(t, 10*time.Second, "the reply at the simulator", func() bool {
			for _, m := range f.Sim.Messages(platformsim.MessageFilter{To: dana}) {
				if m.Type == "text" && strings.Contains(string(m.Body), "Yes, it ships today.") {
					return true
				}
			}
			return false
		})
		opened(danaID, "Yes, it ships today.")
		shortcut(kb.Escape)
		p.waitUntil("the focus back on Dana's row", `document.activeElement?.id === 'conv-' + `+js(danaID))
	})

	t.Run("/ searches; Escape leaves the search, j opens what it found", func(t *testing.T) {
		p.in(t)
		shortcut("/")
		p.waitUntil("the search focused", `document.activeElement?.id === 'inbox-search'`)
		press("Eli")
		p.waitUntil("only Eli listed", `!document.getElementById('conv-' + `+js(danaID)+`) && !!document.getElementById('conv-' + `+js(eliID)+`)`)
		shortcut(kb.Escape)
		p.waitUntil("the focus on Eli's row", `document.activeElement?.id === 'conv-' + `+js(eliID))
		if v := eval[string](p, `document.getElementById('inbox-search').value`); v != "Eli" {
			t.Fatalf("Escape changed the search to %q", v)
		}
		shortcut("j")
		opened(eliID, "Thanks, all good!")
	})

	t.Run("Tab, Enter and Space reach the other actions", func(t *testing.T) {
		p.in(t)
		var seen []string
		// "/" then Escape: the focus back on the open conversation's row.
		backToList := func() {
			t.Helper()
			shortcut("/")
			shortcut(kb.Escape)
			p.waitUntil("the focus on Eli's row", `document.activeElement?.id === 'conv-' + `+js(eliID))
		}
		tabTo := func(name string) {
			t.Helper()
			for i := 0; i < 60; i++ {
				p.do("Tab", chromedp.KeyEvent(kb.Tab))
				got := eval[string](p, focused)
				seen = append(seen, got)
				if got == name {
					return
				}
			}
			t.Fatalf("Tab never reached %q; it went through %q", name, seen)
		}
		for _, name := range []string{"Reply", "Attach a file", "Template", "Assigned to", "Open the contact's page",
			"Create ticket", "Hand to", "Note for the next agent", "Transfer", "New note"} {
			tabTo(name)
		}
		press("A keyboard note")
		tabTo("Add note")
		press("\r")
		p.see("A keyboard note")

		// Space on the custom action: the api's outcome shows.
		var outcome struct {
			Message string `json:"message"`
		}
		f.Do("POST", "/api/custom-actions/"+hook.ID+"/execute", map[string]any{"contact_id": eliID}, admin).Expect(t, 200).Into(t, &outcome)
		backToList()
		tabTo("Create ticket")
		press(" ")
		p.see(outcome.Message)

		// Enter on Template opens the dialog; Escape closes it.
		backToList()
		tabTo("Template")
		press("\r")
		p.seeRole("heading", "Send a template")
		shortcut(kb.Escape)
		p.waitUntil("the template dialog closed", `!document.querySelector('dialog[open]')`)
	})
}
