package console

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"wharf/internal/apptest"
)

// TestConsoleTransfers drives the transfers queue: a transfer created for a
// team appears in the open pages of the team's agent and of an admin
// without a reload, with its queue's count; the agent picks it up and is
// offered the conversation; the admin (transfers:assign) assigns a general
// queue's transfer to the agent, who hands it back to the chatbot. An
// agent outside the team never sees the team's transfers: not in the page,
// and not on the event stream (read here beside the page).
func TestConsoleTransfers(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	ann := f.CreateUser(admin, "ann@wharf.test", "Agent")
	bob := f.CreateUser(admin, "bob@wharf.test", "Agent")
	var team struct{ ID string }
	f.Do("POST", "/api/teams", map[string]any{"name": "Billing", "assignment_strategy": "manual"}, admin).Expect(t, 201).Into(t, &team)
	f.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": ann.User.ID, "role": "agent"}, admin).Expect(t, 201)
	contact := func(phone, name string) string {
		var c struct{ ID string }
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": phone, "name": name}, admin).Expect(t, 201).Into(t, &c)
		return c.ID
	}
	type transfer struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		AgentID string `json:"agent_id"`
	}
	get := func(id string) transfer {
		var tr transfer
		f.Do("GET", "/api/chatbot/transfers/"+id, nil, admin).Expect(t, 200).Into(t, &tr)
		return tr
	}
	// Bob's event stream, read as the console reads it.
	bobEvents := f.OpenStream(f.Server.URL, "/api/events", bob.Auth(), nil)
	if bobEvents.Status != 200 {
		t.Fatalf("bob's stream: %d %s", bobEvents.Status, bobEvents.Body)
	}

	b := startBrowser(t, f.Server.URL)
	pa := b.newPage(t, "ann")
	pa.open("/console/")
	signIn(pa, "ann@wharf.test", "password-123", "User ann@wharf.test")
	pa.click("link", "Transfers")
	pa.seeRole("heading", "Transfers")
	pa.seeRole("heading", "Billing")
	pa.see("Updates live.")
	pb := b.newPage(t, "bob")
	pb.open("/console/")
	signIn(pb, "bob@wharf.test", "password-123", "User bob@wharf.test")
	pb.click("link", "Transfers")
	pb.seeRole("heading", "Transfers")
	pb.seeRole("heading", "General queue")
	pb.see("Updates live.")
	pm := b.newPage(t, "admin")
	pm.open("/console/")
	signIn(pm, apptest.AdminEmail, apptest.AdminPassword, adminName)
	pm.click("link", "Transfers")
	pm.seeRole("heading", "Billing")
	pm.see("Updates live.")

	var billing, general struct{ ID string }
	// waiting is the expression "the queue's card says n wait".
	waiting := func(queue string, n int) string {
		return fmt.Sprintf(`[...document.querySelectorAll('section[aria-label]')].some((s) => s.getAttribute('aria-label') === %s && norm(s.innerText).includes('%d waiting'))`, js(queue), n)
	}

	t.Run("a team's transfer appears live in its agent's queue and is picked up", func(t *testing.T) {
		pa.in(t)
		pm.in(t)
		clara := contact("+15550002001", "Clara Billing")
		f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": clara,
			"team_id": team.ID, "notes": "Asks about an invoice"}, admin).Expect(t, 201).Into(t, &billing)
		pa.see("Clara Billing")
		pa.see("Asks about an invoice")
		pa.seeRole("button", "Pick up next from Billing")
		pa.waitUntil("Billing counts 1", waiting("Billing", 1))
		pm.see("Clara Billing")
		// An agent is offered no assignment; the admin is.
		if pa.has("button", "Assign Clara Billing") {
			t.Fatal("an agent without transfers:assign is offered Assign")
		}
		pm.seeRole("button", "Assign Clara Billing")
		pa.axe("queue")
		pa.shot("queue")
		pa.prefersDark(true)
		pa.shot("queue-dark")
		pa.axe("queue, dark")
		pa.prefersDark(false)

		pa.click("button", "Pick up next from Billing")
		pa.see("You picked up Clara Billing.")
		pa.seeRole("link", "Open the conversation with Clara Billing")
		if tr := get(billing.ID); tr.AgentID != ann.User.ID {
			t.Fatalf("after the pickup %+v", tr)
		}
		pa.waitUntil("Billing counts 0", waiting("Billing", 0))
		// The admin's page follows the pickup without a reload.
		pm.waitUntil("the admin's Billing counts 0", waiting("Billing", 0))
		pm.waitUntil("Clara with Ann on the admin's page", `[...document.querySelectorAll('tbody tr')].some((r) => r.innerText.includes('Clara Billing') && r.innerText.includes('User ann@wharf.test'))`)
		pa.click("link", "Open the conversation with Clara Billing")
		pa.waitUntil("the conversation in the inbox", `location.pathname === '/console/inbox' && new URLSearchParams(location.search).get('c') === `+js(clara))
		pa.seeRole("heading", "Clara Billing")
	})

	t.Run("the admin assigns a general transfer to the agent, who resumes the bot", func(t *testing.T) {
		pa.in(t)
		pm.in(t)
		pa.open("/console/transfers")
		pa.seeRole("heading", "General queue")
		pa.see("Updates live.")
		f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact("+15550002002", "Gus General")}, admin).
			Expect(t, 201).Into(t, &general)
		pm.see("Gus General")
		pa.see("Gus General")
		pm.choose("Agent for Gus General", "User ann@wharf.test")
		pm.click("button", "Assign Gus General")
		pm.see("Assigned to User ann@wharf.test.")
		if tr := get(general.ID); tr.AgentID != ann.User.ID {
			t.Fatalf("after the assignment %+v", tr)
		}
		pa.waitUntil("Gus with Ann", `[...document.querySelectorAll('tbody tr')].some((r) => r.innerText.includes('Gus General') && r.innerText.includes('You'))`)
		pa.click("button", "Resume bot for Gus General")
		pa.see("The chatbot answers Gus General again.")
		if tr := get(general.ID); tr.Status != "resumed" {
			t.Fatalf("after resuming %+v", tr)
		}
		pm.waitUntil("Gus gone from the admin's page", `!pageText().includes('Gus General')`)
	})

	t.Run("an agent outside the team never sees its transfers, in the page or on the stream", func(t *testing.T) {
		pb.in(t)
		// Bob saw the general transfer come and go live...
		pb.waitUntil("the general transfer gone", `!pageText().includes('Gus General')`)
		if pb.has("heading", "Billing") || eval[bool](pb, `pageText().includes('Clara Billing')`) {
			t.Fatal("an agent outside Billing is shown its queue or its transfer")
		}
		pb.reload()
		pb.seeRole("heading", "General queue")
		if pb.has("heading", "Billing") || eval[bool](pb, `pageText().includes('Clara Billing')`) {
			t.Fatal("after a reload, an agent outside Billing is shown its queue or its transfer")
		}
		pb.axe("queue of an agent outside the team")

		// ...and his stream carried the general transfer's events and none of
		// Billing's (created, then assigned by the pickup, were published
		// before the general one's).
		seen := map[string][]string{}
		deadline := time.Now().Add(apptest.MinWait)
		for len(seen[general.ID]) < 3 && time.Now().Before(deadline) {
			ev, ok := bobEvents.Next(time.Until(deadline))
			if !ok {
				break
			}
			var e struct {
				Type string `json:"type"`
				Data struct {
					TransferID string `json:"transfer_id"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
				t.Fatal(err)
			}
			seen[e.Data.TransferID] = append(seen[e.Data.TransferID], e.Type)
		}
		if got := seen[general.ID]; len(got) != 3 || got[0] != "transfer.created" || got[1] != "transfer.assigned" || got[2] != "transfer.resumed" {
			t.Fatalf("bob's stream carried %v of the general transfer", got)
		}
		if got := seen[billing.ID]; len(got) != 0 {
			t.Fatalf("bob's stream carried Billing's transfer: %v", got)
		}
	})
}
