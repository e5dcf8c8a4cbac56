package messaging_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
	"wharf/platformsim"
)

// Template sends are validated in the request, stored pending and sent by
// the worker exactly once.
func TestQueued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		provider *testfactory.Provider
		queue    *testenv.Queue
		org      *testfactory.Org
		actor    messaging.Actor
		account  models.PlatformAccount
		template models.Template
	}
	setup := func(t *testing.T) (*messaging.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		svc, q := newService(t, f, p)
		org := f.Org()
		acc := f.AccountAt(p, org.ID)
		return svc, &testBundle{f: f, provider: p, queue: q, org: org, actor: messaging.Actor{UserID: f.User(org, "Agent").ID},
			account: acc, template: f.TemplateAt(p, acc, "Hi {{1}}")}
	}
	sends := func(bundle *testBundle) int {
		return bundle.provider.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	}

	t.Run("AnInvalidRequestStoresNothingNotEvenAContact", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		pending := bundle.f.Template(bundle.account, "Hi", func(t *models.Template) { t.Status = models.TemplatePending })
		for _, c := range []struct {
			in   messaging.TemplateInput
			kind int
			msg  string
		}{
			{messaging.TemplateInput{TemplateName: bundle.template.Name}, int(apperr.Invalid), "contact_id or phone_number is required"},
			{messaging.TemplateInput{PhoneNumber: "+15550105000"}, int(apperr.Invalid), "template_name or template_id is required"},
			{messaging.TemplateInput{PhoneNumber: "555", TemplateName: bundle.template.Name}, int(apperr.Invalid), "phone_number: "},
			{messaging.TemplateInput{PhoneNumber: "+15550105000", TemplateName: bundle.template.Name}, int(apperr.Invalid), "missing template parameters: 1"},
			{messaging.TemplateInput{PhoneNumber: "+15550105000", TemplateID: &pending.ID}, int(apperr.Invalid), "only APPROVED templates can be sent"},
			{messaging.TemplateInput{PhoneNumber: "+15550105000", TemplateName: "nope"}, int(apperr.NotFound), "template not found"},
			{messaging.TemplateInput{PhoneNumber: "+15550105000", TemplateName: bundle.template.Name, AccountName: "nope",
				Params: map[string]string{"1": "Ada"}}, int(apperr.Invalid), `no account named "nope"`},
		} {
			_, err := svc.QueueTemplate(ctx, bundle.org.ID, bundle.actor, c.in)
			testfactory.WantError(t, err, apperr.Kind(c.kind), c.msg)
		}
		if bundle.f.Count("contacts", "") != 0 || bundle.f.Count("messages", "") != 0 || len(bundle.queue.TaskTypes(t)) != 0 {
			t.Error("a refused template send left a contact, a message or a task")
		}
	})

	t.Run("AValidSendIsQueuedThenSentOnce", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		q, err := svc.QueueTemplate(ctx, bundle.org.ID, bundle.actor, messaging.TemplateInput{PhoneNumber: "+1 555 010 5000",
			TemplateName: bundle.template.Name, Params: map[string]string{"1": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		m := reload(t, bundle.f.DB, q.MessageID)
		if q.Status != models.StatusPending || q.PhoneNumber != "+15550105000" || m.Status != models.StatusPending ||
			m.TemplateID == nil || *m.TemplateID != bundle.template.ID || m.Content.V["text"] != "Hi Ada" || sends(bundle) != 0 {
			t.Fatalf("queued %+v, stored %+v: want it pending, not yet sent", q, m)
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeMessageSend] != 1 {
			t.Errorf("queued %v", got)
		}
		// The task, a duplicate of it, and a retry after a crash: one send.
		for range 3 {
			if err := svc.SendQueued(ctx, bundle.org.ID, q.MessageID, false); err != nil {
				t.Fatal(err)
			}
		}
		if m = reload(t, bundle.f.DB, q.MessageID); m.Status != models.StatusSent || m.PlatformMessageID == nil || sends(bundle) != 1 {
			t.Errorf("after three runs: %+v and %d sends; want one send, the message sent", m, sends(bundle))
		}
		// Another organization's task for it does nothing.
		other := bundle.f.Org()
		q2, _ := svc.QueueTemplate(ctx, bundle.org.ID, bundle.actor, messaging.TemplateInput{PhoneNumber: "+15550105001",
			TemplateName: bundle.template.Name, Params: map[string]string{"1": "Bob"}})
		if err := svc.SendQueued(ctx, other.ID, q2.MessageID, false); err != nil || sends(bundle) != 1 {
			t.Errorf("another organization's task: %v, %d sends", err, sends(bundle))
		}
	})

	t.Run("ATemplateNoLongerSendableFailsTheMessageWithTheReason", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		q, err := svc.QueueTemplate(ctx, bundle.org.ID, bundle.actor, messaging.TemplateInput{PhoneNumber: "+15550105000",
			TemplateID: &bundle.template.ID, Params: map[string]string{"1": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		bundle.f.DB.Model(&models.Template{}).Where("id = ?", bundle.template.ID).Update("status", models.TemplateRejected)
		if err := svc.SendQueued(ctx, bundle.org.ID, q.MessageID, false); err != nil {
			t.Fatal(err)
		}
		m := reload(t, bundle.f.DB, q.MessageID)
		if m.Status != models.StatusFailed || m.ErrorTitle != "the template can no longer be sent" || sends(bundle) != 0 {
			t.Errorf("message %+v after %d sends: want failed with the reason, nothing sent", m, sends(bundle))
		}
	})

	// A send to a new number creates the contact, its message and, only when
	// a webhook takes them, contact.created and message.outgoing: all in
	// the statements of the request and of the settle.
	t.Run("ASendToANewNumberAnnouncesTheContactAndTheSendOnlyToListeners", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		send := func(number string) *messaging.Queued {
			q, err := svc.QueueTemplate(ctx, bundle.org.ID, bundle.actor, messaging.TemplateInput{PhoneNumber: number,
				TemplateName: bundle.template.Name, Params: map[string]string{"1": "Ada"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.SendQueued(ctx, bundle.org.ID, q.MessageID, false); err != nil {
				t.Fatal(err)
			}
			return q
		}
		send("+15550105000")
		if n := bundle.f.Count("events", ""); n != 0 {
			t.Fatalf("%d events with no webhook", n)
		}
		listen(t, bundle.f, bundle.org.ID, "contact.created", "message.outgoing")
		q := send("+15550105001")
		send("+15550105001") // the same contact again: no second contact.created
		var events []models.Event
		bundle.f.DB.Order("created_at").Find(&events)
		kinds := map[string]int{}
		for _, e := range events {
			kinds[e.Event]++
		}
		if len(events) != 3 || kinds["contact.created"] != 1 || kinds["message.outgoing"] != 2 {
			t.Fatalf("events %v, want one contact.created and two message.outgoing", kinds)
		}
		m := reload(t, bundle.f.DB, q.MessageID)
		var created models.Event
		bundle.f.DB.Take(&created, "event = 'contact.created'")
		var data map[string]any
		if err := json.Unmarshal(created.Data, &data); err != nil {
			t.Fatal(err)
		}
		if data["contact_id"] != m.ContactID.String() || data["phone_number"] != "+15550105001" || data["source"] != "send" ||
			data["account_id"] != bundle.account.ID.String() || created.OrganizationID != bundle.org.ID {
			t.Errorf("contact.created %v, want the created contact %s", data, m.ContactID)
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeWebhookDispatch] != 3 {
			t.Errorf("dispatch tasks %v, want one per event", got)
		}
	})

	// The claim reads account and template with the message; what changed
	// since the request is seen as exactly as separate reads would.
	t.Run("ADeletedTemplateOrAnInactiveAccountFailsTheMessageAtSendTime", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		queue := func(number string) *messaging.Queued {
			q, err := svc.QueueTemplate(ctx, bundle.org.ID, bundle.actor, messaging.TemplateInput{PhoneNumber: number,
				TemplateID: &bundle.template.ID, Params: map[string]string{"1": "Ada"}})
			if err != nil {
				t.Fatal(err)
			}
			return q
		}
		gone, inactive := queue("+15550105000"), queue("+15550105001")
		bundle.f.DB.Delete(&models.Template{}, "id = ?", bundle.template.ID)
		if err := svc.SendQueued(ctx, bundle.org.ID, gone.MessageID, false); err != nil {
			t.Fatal(err)
		}
		bundle.f.DB.Model(&models.PlatformAccount{}).Where("id = ?", bundle.account.ID).Update("status", models.AccountDisconnected)
		if err := svc.SendQueued(ctx, bundle.org.ID, inactive.MessageID, false); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[*messaging.Queued][2]string{
			gone:     {"the template can no longer be sent", "template not found"},
			inactive: {"the account is not active", ""},
		} {
			m := reload(t, bundle.f.DB, id.MessageID)
			if m.Status != models.StatusFailed || m.ErrorTitle != want[0] || m.ErrorDetail != want[1] {
				t.Errorf("message %+v: want failed with %q", m, want)
			}
		}
		if sends(bundle) != 0 {
			t.Errorf("%d sends, want none", sends(bundle))
		}
	})

	t.Run("TheSweepRequeuesLostTasksAndFailsSendsWithoutAnOutcome", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := bundle.f.Contact(bundle.org.ID, &bundle.account.ID)
		lost := outgoing(t, bundle.f, c, "", models.StatusPending)
		recent := outgoing(t, bundle.f, c, "", models.StatusPending)
		unconfirmed := outgoing(t, bundle.f, c, "", models.StatusPending)
		bundle.f.DB.Exec(`UPDATE messages SET created_at = now() - interval '2 minutes' WHERE id IN (?, ?)`, lost.ID, unconfirmed.ID)
		bundle.f.DB.Exec(`UPDATE messages SET send_started_at = ? WHERE id = ?`, time.Now().Add(-11*time.Minute), unconfirmed.ID)
		requeued, failed, err := svc.SweepUnconfirmed(ctx)
		if err != nil || requeued != 1 || failed != 1 {
			t.Fatalf("sweep: %d requeued, %d failed, %v; want one of each", requeued, failed, err)
		}
		if reload(t, bundle.f.DB, recent.ID).Status != models.StatusPending || reload(t, bundle.f.DB, unconfirmed.ID).Status != models.StatusFailed {
			t.Error("want the recent send left alone and the unconfirmed one failed")
		}
		// A task still queued is not counted again.
		if requeued, _, _ = svc.SweepUnconfirmed(ctx); requeued != 0 {
			t.Errorf("second sweep requeued %d", requeued)
		}
	})
}
