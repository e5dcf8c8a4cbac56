package console

import (
	"strconv"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleInboxActions: the contact panel shows the contact's metadata
// by the display rules; an agent runs a webhook custom action from the
// open conversation and sees its outcome; runs JavaScript actions in the
// sandbox page (one answers a notice with the contact's and the user's
// names; their code can neither read the console's storage nor call the
// api, a javascript: link is not opened, and a loop that never ends is
// given up after ten seconds while the page stays usable); and hands the
// conversation to a team's queue with a note.
func TestConsoleInboxActions(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	admin := f.Admin.Auth()
	const clara = "15550009001"
	f.Incoming(platformsim.Incoming{From: clara, ProfileName: "Clara Ortiz", Type: "text", Text: "Can someone call me back?"})
	apptest.Eventually(t, 10*time.Second, "Clara's message stored", func() bool {
		var n int64
		f.DB.Raw(`SELECT count(*) FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE c.phone_number = ?`, "+"+clara).Scan(&n)
		return n == 1
	})
	var claraID string
	f.DB.Raw(`SELECT id FROM contacts WHERE phone_number = ?`, "+"+clara).Scan(&claraID)
	f.Do("PUT", "/api/contacts/"+claraID, map[string]any{"metadata": map[string]any{"plan": "Gold",
		"orders": []map[string]any{{"order": "A-17", "total": 30}}}}, admin).Expect(t, 200)
	var team struct{ ID string }
	f.Do("POST", "/api/teams", map[string]any{"name": "Callbacks", "assignment_strategy": "manual"}, admin).Expect(t, 201).Into(t, &team)
	var hook struct{ ID string }
	f.Do("POST", "/api/custom-actions", map[string]any{"name": "Create ticket", "action_type": "webhook",
		"config": map[string]any{"url": "https://tickets.invalid/new?c={{contact.id}}"}}, admin).Expect(t, 201).Into(t, &hook)
	for _, a := range []struct{ name, code string }{
		{"Greet", "return { toast: { message: 'Hello ' + (context.contact.name || context.contact.profile_name) + ' from ' + context.user.name, type: 'success' } }"},
		{"Peek", "return { toast: { message: 'found ' + localStorage.length + ' keys' } }"},
		// An absolute URL: the code runs in a worker of an opaque origin.
		{"Call home", "return fetch(" + strconv.Quote(f.Server.URL+"/api/me") + ").then(() => ({ toast: { message: 'the api answered' } }))"},
		{"Open ticket", "return { url: 'javascript:alert(1)', toast: { message: 'no link opened' } }"},
		{"Spin", "for (;;) {}"},
	} {
		f.Do("POST", "/api/custom-actions", map[string]any{"name": a.name, "action_type": "javascript", "config": map[string]any{"code": a.code}}, admin).
			Expect(t, 201)
	}
	// What the api answers for the webhook (its target does not resolve):
	// the page must show the same.
	var outcome struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	f.Do("POST", "/api/custom-actions/"+hook.ID+"/execute", map[string]any{"contact_id": claraID}, admin).Expect(t, 200).Into(t, &outcome)
	if outcome.Success || outcome.Message == "" {
		t.Fatalf("the webhook's outcome: %+v", outcome)
	}

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	p.click("link", "Inbox")
	p.seeRole("heading", "Inbox")
	openConversation(p, "Clara Ortiz")
	p.seeRole("heading", "Actions")
	// The contact's metadata by the display rules, as on its page.
	p.seeRole("heading", "Details")
	p.see("Gold")
	p.see("A-17")

	// A webhook action runs and says how it went.
	p.click("button", "Create ticket")
	p.see(outcome.Message)
	// JavaScript actions run in the sandbox, with the contact and the user.
	dismissNotices(p)
	p.click("button", "Greet")
	p.see("Hello Clara Ortiz from " + adminName)
	dismissNotices(p)
	p.click("button", "Peek")
	p.see("Peek failed: localStorage is not defined")
	dismissNotices(p)
	p.click("button", "Call home")
	p.see("Call home failed: Failed to fetch")
	if eval[bool](p, `pageText().includes('the api answered')`) {
		t.Fatal("an action's code reached the api")
	}
	dismissNotices(p)
	p.click("button", "Open ticket")
	p.see("no link opened")
	dismissNotices(p)
	p.click("button", "Spin")
	p.see("Spin failed: it did not answer within 10 seconds")
	if n := eval[int](p, `document.querySelectorAll('iframe').length`); n != 0 {
		t.Fatalf("%d sandbox frames left behind", n)
	}
	p.shot("inbox-actions")
	p.axe("the inbox with its actions")

	p.chooseOnce("Hand to", "Callbacks")
	p.fill("Note for the next agent", "Wants a call back after 5 pm")
	// The panel scrolls: bring the button into view first.
	eval[bool](p, `(() => { byRole('button', 'Transfer').scrollIntoView({ block: 'center' }); return true })()`)
	p.click("button", "Transfer")
	p.see("Handed to the Callbacks queue.")
	var list struct {
		Transfers []struct {
			TeamID *string `json:"team_id"`
			Notes  string  `json:"notes"`
			Status string  `json:"status"`
		} `json:"transfers"`
	}
	f.Do("GET", "/api/chatbot/transfers", nil, admin).Expect(t, 200).Into(t, &list)
	if len(list.Transfers) != 1 || list.Transfers[0].TeamID == nil || *list.Transfers[0].TeamID != team.ID ||
		list.Transfers[0].Notes != "Wants a call back after 5 pm" || list.Transfers[0].Status != "active" {
		t.Fatalf("transfers: %+v", list.Transfers)
	}
}

// dismissNotices closes the notices shown, which may lie over the buttons
// a test clicks next.
func dismissNotices(p *page) {
	p.t.Helper()
	eval[int](p, `[...document.querySelectorAll('button')].filter((e) => shown(e) && named(e) === 'Dismiss').map((e) => e.click()).length`)
	p.waitUntil("the notices dismissed", `!byRole('button', 'Dismiss')`)
}
