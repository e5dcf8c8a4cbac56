package messaging_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/database"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/platform"
)

type fixture struct {
	db                     *gorm.DB
	svc                    *messaging.Service
	org, acc, contact, msg uuid.UUID
}

// newFixture stores one sent message; pid is its provider id ("" for a
// send whose answer was lost).
func newFixture(t *testing.T, pid string) *fixture {
	ctx := context.Background()
	db, err := database.Open(ctx, testenv.DatabaseURL(t), testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { database.Close(db) })
	org, acc, contact, msg := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	var pidArg any
	if pid != "" {
		pidArg = pid
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO organizations (id, name, slug) VALUES (?, 'o', ?)`, []any{org, org.String()}},
		{`INSERT INTO platform_accounts (id, organization_id, name, phone_number_id, business_account_id, access_token_enc, status)
		  VALUES (?, ?, 'a', '1', '2', '\x00', 'active')`, []any{acc, org}},
		{`INSERT INTO contacts (id, organization_id, phone_number) VALUES (?, ?, '+15550000000')`, []any{contact, org}},
		{`INSERT INTO messages (id, organization_id, contact_id, account_id, platform_message_id, direction, type, status, occurred_at)
		  VALUES (?, ?, ?, ?, ?, 'outgoing', 'text', ?, now())`, []any{msg, org, contact, acc, pidArg, map[bool]string{true: "sent", false: "pending"}[pid != ""]}},
	} {
		if err := db.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{db: db, svc: messaging.NewService(messaging.Deps{DB: db, Log: testenv.Quiet()}), org: org, acc: acc, contact: contact, msg: msg}
}

func (f *fixture) outcome(status, callback string) []*messaging.Outcome {
	return messaging.Reduce([]platform.Status{{ID: "wamid.x", Status: status, Timestamp: "1700000000", BizOpaqueCallbackData: callback}}, time.Now())
}

// race applies first in one transaction, then, while it holds the row,
// second in another (which waits), commits the first and then the second.
func (f *fixture) race(t *testing.T, first, second []*messaging.Outcome) string {
	ctx := context.Background()
	tx1 := f.db.Begin()
	if _, err := f.svc.ApplyStatuses(ctx, tx1, f.org, f.acc, first); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		tx2 := f.db.Begin()
		unknown, err := f.svc.ApplyStatuses(ctx, tx2, f.org, f.acc, second) // blocks on the row lock
		if err == nil && len(unknown) > 0 {
			t.Errorf("second batch reported the message unknown")
		}
		if err == nil {
			err = tx2.Commit().Error
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // the second batch is now waiting
	if err := tx1.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var status string
	f.db.Raw(`SELECT status FROM messages WHERE id = ?`, f.msg).Scan(&status)
	return status
}

// A "delivered" batch that waited for the lock of a concurrent "read" batch
// must not move the message back to delivered.
func TestConcurrentStatusBatchesNeverMoveBackwards(t *testing.T) {
	f := newFixture(t, "wamid.x")
	if got := f.race(t, f.outcome("read", ""), f.outcome("delivered", "")); got != "read" {
		t.Fatalf("status %q after concurrent batches, want read", got)
	}
}

// Two batches settling a send whose answer was lost (no provider id yet,
// matched through the callback data): the second must apply too, not take
// the message for unknown because the first set the id meanwhile.
func TestConcurrentReconciliationAppliesBothBatches(t *testing.T) {
	f := newFixture(t, "")
	cb := f.msg.String()
	if got := f.race(t, f.outcome("delivered", cb), f.outcome("read", cb)); got != "read" {
		t.Fatalf("status %q after concurrent reconciliations, want read", got)
	}
}
