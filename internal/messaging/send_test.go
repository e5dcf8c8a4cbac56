package messaging_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
	"wharf/platformsim"
)

// Free-form sends: valid content, to a contact of the organization that
// wrote within the service window, from an active account.
func TestSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		provider *testfactory.Provider
		queue    *testenv.Queue
		org      *testfactory.Org
		agent    models.User
		account  models.PlatformAccount
		contact  models.Contact
	}
	setup := func(t *testing.T) (*messaging.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		svc, q := newService(t, f, p)
		org := f.Org()
		acc := f.AccountAt(p, org.ID)
		c := f.Contact(org.ID, &acc.ID)
		wrote(t, f, c, time.Hour)
		return svc, &testBundle{f: f, provider: p, queue: q, org: org, agent: f.User(org, "Agent"), account: acc, contact: c}
	}
	sends := func(bundle *testBundle) int {
		return bundle.provider.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	}

	t.Run("ContentIsValidatedBeforeAnythingIsSent", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		actor := messaging.Actor{UserID: bundle.agent.ID}
		for text, msg := range map[string]string{" ": "text is required", strings.Repeat("x", 4097): "text must be at most 4096 characters"} {
			_, err := svc.SendText(ctx, bundle.org.ID, actor, bundle.contact.ID, text)
			testfactory.WantError(t, err, apperr.Invalid, msg)
		}
		buttons := func(n int) []messaging.Button {
			out := make([]messaging.Button, n)
			for i := range out {
				out[i] = messaging.Button{Title: "ok"}
			}
			return out
		}
		for _, c := range []struct {
			in  messaging.Interactive
			msg string
		}{
			{messaging.Interactive{Type: "button", Buttons: buttons(1)}, "interactive.body is required"},
			{messaging.Interactive{Type: "list", Body: "b"}, "interactive.type must be button or cta_url"},
			{messaging.Interactive{Type: "button", Body: "b", Buttons: buttons(4)}, "interactive.buttons must have 1 to 3 buttons"},
			{messaging.Interactive{Type: "button", Body: "b", Buttons: []messaging.Button{{Title: strings.Repeat("t", 21)}}}, "button 1: title is required and at most 20"},
			{messaging.Interactive{Type: "cta_url", Body: "b", ButtonText: "Open"}, "interactive.url"},
			{messaging.Interactive{Type: "cta_url", Body: "b", URL: "https://x.test"}, "interactive.button_text is required"},
		} {
			_, err := svc.SendInteractive(ctx, bundle.org.ID, messaging.Actor{UserID: bundle.agent.ID}, bundle.contact.ID, c.in)
			testfactory.WantError(t, err, apperr.Invalid, c.msg)
		}
		if sends(bundle) != 0 || bundle.f.Count("messages", "") != 0 {
			t.Error("an invalid send reached the provider or was stored")
		}
	})

	t.Run("OnlyWithinTheServiceWindowOfTheOrganizationsContact", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		actor := messaging.Actor{UserID: bundle.agent.ID}
		silent := bundle.f.Contact(bundle.org.ID, &bundle.account.ID)
		lapsed := bundle.f.Contact(bundle.org.ID, &bundle.account.ID)
		wrote(t, bundle.f, lapsed, messaging.ServiceWindow+time.Minute)
		for _, c := range []models.Contact{silent, lapsed} {
			_, err := svc.SendText(ctx, bundle.org.ID, actor, c.ID, "hi")
			testfactory.WantError(t, err, apperr.Invalid, "outside the customer-service window only templates can be sent")
		}
		theirs := bundle.f.Contact(bundle.f.Org().ID, nil)
		wrote(t, bundle.f, theirs, time.Minute)
		_, err := svc.SendText(ctx, bundle.org.ID, actor, theirs.ID, "hi")
		testfactory.WantError(t, err, apperr.NotFound, "contact not found")
		if sends(bundle) != 0 {
			t.Errorf("%d sends reached the provider", sends(bundle))
		}
	})

	t.Run("AnAcceptedSendIsStoredSentAndAnnounced", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		listen(t, bundle.f, bundle.org.ID, "message.sent", "message.outgoing")
		sent, err := svc.SendText(ctx, bundle.org.ID, messaging.Actor{UserID: bundle.agent.ID}, bundle.contact.ID, " hello ")
		if err != nil {
			t.Fatal(err)
		}
		m := reload(t, bundle.f.DB, sent.ID)
		if m.Status != models.StatusSent || m.PlatformMessageID == nil || *m.PlatformMessageID != sent.PlatformMessageID ||
			m.SentBy == nil || *m.SentBy != bundle.agent.ID || m.Content.V["text"] != "hello" || m.SendStartedAt == nil {
			t.Errorf("stored %+v", m)
		}
		reqs := bundle.provider.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
		if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"biz_opaque_callback_data":"`+sent.ID.String()+`"`) {
			t.Errorf("the send does not carry the message id for a lost answer: %s", reqs[0].Body)
		}
		// An API key's send is not an agent's: only message.outgoing.
		key := uuid.New()
		if err := bundle.f.DB.Exec(`INSERT INTO api_keys (id, organization_id, user_id, name, key_prefix, key_hash) VALUES (?, ?, ?, 'k', 'wh_x', ?)`,
			key, bundle.org.ID, bundle.agent.ID, key[:]).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SendText(ctx, bundle.org.ID, messaging.Actor{UserID: bundle.agent.ID, APIKeyID: &key}, bundle.contact.ID, "by key"); err != nil {
			t.Fatal(err)
		}
		if bundle.f.Count("events", "event = 'message.sent'") != 1 || bundle.f.Count("events", "event = 'message.outgoing'") != 2 {
			t.Error("want message.sent for the agent's send only, message.outgoing for both")
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeWebhookDispatch] != 3 {
			t.Errorf("queued %v, want a dispatch per event", got)
		}
	})

	t.Run("ARefusedSendIsStoredFailedWithTheProvidersReason", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		if err := bundle.provider.Sim.SetSendError(bundle.provider.PhoneNumberID(), 131031); err != nil {
			t.Fatal(err)
		}
		_, err := svc.SendText(ctx, bundle.org.ID, messaging.Actor{UserID: bundle.agent.ID}, bundle.contact.ID, "hi")
		testfactory.WantError(t, err, apperr.Invalid, "the provider refused the message (code 131031")
		var m models.Message
		bundle.f.DB.Take(&m, "contact_id = ?", bundle.contact.ID)
		if m.Status != models.StatusFailed || m.ErrorCode == nil || *m.ErrorCode != 131031 || m.FailedAt == nil {
			t.Errorf("stored %+v: want failed with the code", m)
		}
	})

	t.Run("ANonActiveAccountDoesNotSend", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		bundle.f.DB.Model(&models.PlatformAccount{}).Where("id = ?", bundle.account.ID).Update("status", models.AccountDisconnected)
		_, err := svc.SendText(ctx, bundle.org.ID, messaging.Actor{UserID: bundle.agent.ID}, bundle.contact.ID, "hi")
		testfactory.WantError(t, err, apperr.Invalid, "is disconnected, not active")
		if sends(bundle) != 0 || bundle.f.Count("messages", "") != 0 {
			t.Error("a send from a disconnected account happened")
		}
	})
}
