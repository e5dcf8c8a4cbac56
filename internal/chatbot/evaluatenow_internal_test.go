package chatbot

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/identity"
	"wharf/internal/inbound"
	"wharf/internal/infra/safehttp"
	"wharf/internal/messaging"
	"wharf/internal/teams"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/transfers"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// recordingReplier stores nothing: it answers a new id for each reply and
// records which were sent.
type recordingReplier struct {
	mu   sync.Mutex
	sent []uuid.UUID
}

func (r *recordingReplier) QueueReply(context.Context, *gorm.DB, uuid.UUID, uuid.UUID, uuid.UUID, messaging.Reply) (uuid.UUID, error) {
	return uuid.New(), nil
}

func (r *recordingReplier) SendQueued(_ context.Context, _, id uuid.UUID, _ bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, id)
	return nil
}

func (r *recordingReplier) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent)
}

// An incoming message is evaluated right after the inbound commit, in the
// task that stored it: its reply is sent and no chatbot:evaluate task is
// enqueued. When another evaluation holds the contact's lock, the message
// goes to a task, as before.
func TestConsumedMessagesAreEvaluatedAfterTheCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testenv.DB(t)
	f := testfactory.New(t, db)
	org := f.Org()
	acc := f.Account(org.ID)
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	rc := asynq.RedisClientOpt{Addr: rdb.Options().Addr, DB: rdb.Options().DB}
	client := asynq.NewClient(rc)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(rc)
	t.Cleanup(func() { insp.Close() })
	policy := safehttp.Policy{AllowPrivate: true}
	wh := webhooks.NewService(db, nil, nil, policy, nil, testenv.Quiet())
	rep := &recordingReplier{}
	ids := identity.NewService(db, nil, nil, testenv.Quiet())
	ts := transfers.NewService(transfers.Deps{DB: db, Events: wh, Contacts: contacts.NewService(db, wh, nil, ids), People: ids,
		Teams: teams.NewService(db, ids)})
	s := NewService(Deps{DB: db, Policy: policy, Transfers: ts, Replies: rep,
		Enqueuer: jobs.NewEnqueuer(client, insp), Log: testenv.Quiet()})
	if err := db.Exec(`INSERT INTO chatbot_settings (organization_id, chatbot_enabled) VALUES (?, true)`, org.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&models.KeywordRule{OrganizationID: org.ID, Name: "a", MatchType: "exact", ResponseType: "text", Response: "reply a",
		Enabled: true, Keywords: models.JSON[[]string]{V: []string{"a"}}}).Error; err != nil {
		t.Fatal(err)
	}

	// consume stores an incoming "a" of contact c and runs the chatbot's
	// consumer in its transaction, then its after-commit work.
	consume := func(c models.Contact) {
		t.Helper()
		m := models.Message{ID: uuid.New(), OrganizationID: org.ID, ContactID: c.ID, AccountID: &acc.ID,
			Direction: models.DirectionIncoming, Type: "text", Status: models.StatusDelivered, OccurredAt: s.now()}
		m.Content.V = map[string]any{"text": "a"}
		var res inbound.MessageResult
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&m).Error; err != nil {
				return err
			}
			var err error
			res, err = s.ConsumeMessage(ctx, tx, &inbound.Incoming{Account: &accounts.Account{PlatformAccount: acc}, Contact: &c,
				MessageID: m.ID, Message: platform.IncomingMessage{Type: "text", Text: &struct {
					Body string `json:"body"`
				}{Body: "a"}}})
			return err
		})
		if err != nil || res.AfterCommit == nil {
			t.Fatalf("consume: %v (after-commit work: %v)", err, res.AfterCommit != nil)
		}
		res.AfterCommit(ctx)
	}
	pending := func() int {
		t.Helper()
		info, err := insp.GetQueueInfo(jobs.QueueCritical)
		if err != nil {
			return 0 // no task was ever enqueued: the queue does not exist
		}
		return info.Pending + info.Retry + info.Scheduled
	}

	consume(f.Contact(org.ID, &acc.ID))
	if rep.count() != 1 || pending() != 0 {
		t.Fatalf("after the commit: %d replies sent, %d tasks, want 1 and 0", rep.count(), pending())
	}
	if n := f.Count("chatbot_inbox", "evaluated_at IS NULL"); n != 0 {
		t.Fatalf("%d messages wait in the inbox", n)
	}

	// The lock of the next contact is held (by an evaluation of another
	// task): the message waits for a task of its own.
	next := f.Contact(org.ID, &acc.ID)
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(hashtext('chatbot'), hashtext($1))`, next.ID.String()); err != nil {
		t.Fatal(err)
	}
	consume(next)
	if rep.count() != 1 || pending() != 1 {
		t.Fatalf("with the contact's lock held: %d replies sent, %d tasks, want 1 (the first) and 1", rep.count(), pending())
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
		t.Fatal(err)
	}
}
