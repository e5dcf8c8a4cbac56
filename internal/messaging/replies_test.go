package messaging_test

import (
	"context"
	"encoding/json"
	"testing"

	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platformsim"
)

// A bot reply is stored pending in the caller's transaction and sent by
// SendQueued, like a queued template: text, quick-reply buttons, a list
// past three buttons, and a platform flow each reach the provider in their
// shape; a second SendQueued (the sweeper after a crash, a duplicate task)
// sends nothing more.
func TestBotRepliesAreStoredThenSentOnce(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _ := newService(t, f, p)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	c := f.Contact(org.ID, &acc.ID, func(c *models.Contact) { c.PhoneNumber = "+15550108888" })
	ctx := context.Background()
	four := []messaging.Button{{ID: "a", Title: "One"}, {ID: "b", Title: "Two"}, {ID: "c", Title: "Three"}, {ID: "d", Title: "Four"}}
	replies := []messaging.Reply{
		{Text: "Hello"},
		{Text: "Pick one", Buttons: four[:2]},
		{Text: "Pick from the list", Buttons: four, ListButton: "Options"},
		{Text: "Fill this in", Flow: &messaging.FlowReply{FlowID: "123", CTA: "Open", Token: "tok", Screen: "START"}},
	}
	var ids []string
	for _, r := range replies {
		id, err := svc.QueueReply(ctx, f.DB, org.ID, c.ID, acc.ID, r)
		if err != nil {
			t.Fatal(err)
		}
		if m := reload(t, f.DB, id); m.Status != models.StatusPending || m.Direction != models.DirectionOutgoing || m.SentBy != nil {
			t.Fatalf("stored %+v", m)
		}
		for range 2 {
			if err := svc.SendQueued(ctx, org.ID, id, false); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id.String())
	}
	sent := p.Sim.Messages(platformsim.MessageFilter{To: "15550108888"})
	if len(sent) != len(replies) {
		t.Fatalf("%d sends for %d replies", len(sent), len(replies))
	}
	want := []string{"text", "button", "list", "flow"}
	for i, m := range sent {
		var body struct {
			Type        string
			Text        struct{ Body string }
			Interactive struct {
				Type   string
				Action struct {
					Button   string
					Buttons  []any
					Sections []struct{ Rows []any }
					Name     string
				}
			}
		}
		if err := json.Unmarshal(m.Body, &body); err != nil {
			t.Fatal(err)
		}
		got := body.Type
		if got == "interactive" {
			got = body.Interactive.Type
		}
		if got != want[i] || m.BizOpaqueCallbackData != ids[i] {
			t.Fatalf("send %d: %s (callback %s), want %s (%s): %s", i, got, m.BizOpaqueCallbackData, want[i], ids[i], m.Body)
		}
		switch want[i] {
		case "button":
			if len(body.Interactive.Action.Buttons) != 2 {
				t.Fatalf("buttons: %s", m.Body)
			}
		case "list":
			if body.Interactive.Action.Button != "Options" || len(body.Interactive.Action.Sections) != 1 || len(body.Interactive.Action.Sections[0].Rows) != 4 {
				t.Fatalf("list: %s", m.Body)
			}
		}
	}
}
