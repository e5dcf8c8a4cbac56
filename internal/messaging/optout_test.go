package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/inbound"
	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// An incoming keyword opts its contact out of marketing or back in, with
// the change recorded and announced, the organization's confirmation
// queued as a reply, and the message answered (the chatbot leaves it).
// Anything but the whole word is an ordinary message.
func TestOptOutKeywords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	svc, q := newService(t, f, f.Provider(nil))
	org := f.Org()
	acc := f.Account(org.ID)
	contact := f.Contact(org.ID, &acc.ID)
	listen(t, f, org.ID, "contact.opted_out", "contact.opted_in")
	if err := orgsettings.NewService(f.DB, f.Box, nil, nil).Apply(ctx, org.ID, orgsettings.Update{OptOutConfirmation: ptr("You will get no more offers. Send START to undo.")}); err != nil {
		t.Fatal(err)
	}
	n := 0
	consume := func(text string) inbound.MessageResult {
		t.Helper()
		n++
		raw, _ := json.Marshal(map[string]any{"from": "15550001111", "id": fmt.Sprintf("wamid.kw%d", n), "timestamp": "1700000000", "type": "text",
			"text": map[string]string{"body": text}})
		var m platform.IncomingMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var res inbound.MessageResult
		err := f.DB.Transaction(func(tx *gorm.DB) error {
			var err error
			res, err = svc.ConsumeMessage(ctx, tx, &inbound.Incoming{Account: &accounts.Account{PlatformAccount: acc}, Contact: &contact, Message: m})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.AfterCommit != nil {
			res.AfterCommit(ctx)
		}
		return res
	}
	state := func() models.Contact {
		var c models.Contact
		if err := f.DB.Take(&c, "id = ?", contact.ID).Error; err != nil {
			t.Fatal(err)
		}
		return c
	}

	if res := consume("stop please"); res.Answered || state().MarketingOptOut {
		t.Fatal("a sentence with STOP in it is no keyword")
	}
	res := consume("  Stop ")
	c := state()
	if !res.Answered || !c.MarketingOptOut || c.OptOutSource != models.OptOutKeyword || c.OptedOutAt == nil || c.OptOutChangedAt == nil {
		t.Fatalf("after STOP: answered %v, contact %+v", res.Answered, c)
	}
	if f.Count("events", "event = 'contact.opted_out' AND data->>'keyword' = 'Stop' AND data->>'source' = 'keyword'") != 1 {
		t.Fatal("STOP emits one contact.opted_out with its keyword")
	}
	if f.Count("messages", "direction = 'outgoing' AND type = 'text' AND status = 'pending' AND content->>'text' LIKE 'You will get no more offers%'") != 1 ||
		q.TaskTypes(t)["message:send"] != 1 {
		t.Fatal("the opt-out confirmation is queued as a reply and its send enqueued")
	}
	// STOP again: answered (the chatbot still leaves it), no change, no event.
	if res := consume("STOP"); !res.Answered || f.Count("events", "event = 'contact.opted_out'") != 1 {
		t.Fatal("a second STOP is answered and changes nothing")
	}
	// START from a contact who has not opted out is an ordinary message
	// (the chatbot's to answer: flows start on such words).
	other := contact
	contact = f.Contact(org.ID, &acc.ID)
	if res := consume("START"); res.Answered || f.Count("events", "event = 'contact.opted_in'") != 0 {
		t.Fatal("START from a contact who never opted out is no keyword")
	}
	contact = other
	res = consume("start")
	c = state()
	if !res.Answered || c.MarketingOptOut || c.OptedOutAt != nil || c.OptOutSource != models.OptOutKeyword ||
		f.Count("events", "event = 'contact.opted_in'") != 1 {
		t.Fatalf("after START: answered %v, contact %+v", res.Answered, c)
	}
	// No opt-in confirmation is set: none is sent.
	if f.Count("messages", "direction = 'outgoing'") != 2 {
		t.Fatalf("want only the two opt-out confirmations, got %d outgoing messages", f.Count("messages", "direction = 'outgoing'"))
	}
}

// A marketing template to a contact who opted out is refused in the
// request (by contact id or by number), and, when the contact opts out
// after the request, by the worker: nothing reaches the provider. A
// utility template to the same contact goes.
func TestMarketingTemplateToAnOptedOutContact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _ := newService(t, f, p)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	actor := messaging.Actor{UserID: f.User(org, "Agent").ID}
	promo := f.TemplateAt(p, acc, "Sale!", func(t *models.Template) { t.Category = "MARKETING" })
	notice := f.TemplateAt(p, acc, "Your order shipped")
	out := f.Contact(org.ID, &acc.ID, func(c *models.Contact) { c.MarketingOptOut = true })
	sends := func() int { return p.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: "/messages"}) }

	for _, in := range []messaging.TemplateInput{{ContactID: &out.ID, TemplateName: promo.Name}, {PhoneNumber: out.PhoneNumber, TemplateID: &promo.ID}} {
		_, err := svc.QueueTemplate(ctx, org.ID, actor, in)
		testfactory.WantError(t, err, apperr.Invalid, "the contact opted out of marketing messages")
	}
	if f.Count("messages", "") != 0 {
		t.Fatal("a refused send stored a message")
	}
	qd, err := svc.QueueTemplate(ctx, org.ID, actor, messaging.TemplateInput{ContactID: &out.ID, TemplateName: notice.Name})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SendQueued(ctx, org.ID, qd.MessageID, false); err != nil || reload(t, f.DB, qd.MessageID).Status != models.StatusSent || sends() != 1 {
		t.Fatalf("a utility template to an opted-out contact: %v, %d sends", err, sends())
	}

	// Queued while opted in, opted out before the worker sends it.
	in := f.Contact(org.ID, &acc.ID)
	qd, err = svc.QueueTemplate(ctx, org.ID, actor, messaging.TemplateInput{ContactID: &in.ID, TemplateName: promo.Name})
	if err != nil {
		t.Fatal(err)
	}
	f.DB.Model(&models.Contact{}).Where("id = ?", in.ID).Update("marketing_opt_out", true)
	if err := svc.SendQueued(ctx, org.ID, qd.MessageID, false); err != nil {
		t.Fatal(err)
	}
	m := reload(t, f.DB, qd.MessageID)
	if m.Status != models.StatusFailed || m.ErrorTitle == "" || sends() != 1 {
		t.Fatalf("the worker's send to a contact who opted out meanwhile: %s %q, %d sends", m.Status, m.ErrorTitle, sends())
	}
	t.Logf("failed with: %s", m.ErrorTitle)
}
