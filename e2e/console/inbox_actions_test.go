package console

import (
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleInboxActions: the contact panel shows the contact's metadata
// by the display rules; from the open conversation an agent runs the
// organization's JavaScript custom action (in the sandbox page, which
// answers a notice with the contact's name), sees that an action's code
// can neither read the console's storage nor call the api (the sandbox is
// an opaque origin without network), and hands the conversation to a
// team's queue with a note.
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
	for i, code := range map[string]string{
		"Greet":       "return { toast: { message: 'Hello ' + context.contact.name + ' from ' + context.user.name, type: 'success' } }",
		"Peek":        "return { toast: { message: 'found ' + localStorage.length + ' keys' } }",
		"Call home":   "return fetch('/api/me').then(() => ({ toast: { message: 'the api answered' } }))",
		"Open ticket": "return { url: 'javascript:alert(1)', toast: { message: 'no link opened' } }",
	} {
		f.Do("POST", "/api/custom-actions", map[string]any{"name": i, "action_type": "javascript", "config": map[string]any{"code": code}}, admin).
			Expect(t, 201)
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

	p.click("button", "Greet")
	p.see("Hello Clara Ortiz from " + adminName)
	p.click("button", "Peek")
	p.waitUntil("the storage refused", `/Peek failed: .*(denied|insecure|sandbox|not allowed|SecurityError)/i.test(pageText())`)
	p.click("button", "Call home")
	p.waitUntil("the request refused", `/Call home failed: .*(fetch|refused|Content Security Policy)/i.test(pageText())`)
	if pageHas := eval[bool](p, `pageText().includes('the api answered')`); pageHas {
		t.Fatal("an action's code reached the api")
	}
	p.click("button", "Open ticket")
	p.see("no link opened")
	if n := eval[int](p, `document.querySelectorAll('iframe').length`); n != 0 {
		t.Fatalf("%d sandbox frames left behind", n)
	}
	p.shot("inbox-actions")
	p.axe("the inbox with its actions")

	p.chooseOnce("Hand to", "Callbacks")
	p.fill("Note for the next agent", "Wants a call back after 5 pm")
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
		list.Transfers[0].Notes != "Wants a call back after 5 pm" || list.Transfers[0].Status != "waiting" {
		t.Fatalf("transfers: %+v", list.Transfers)
	}
}
