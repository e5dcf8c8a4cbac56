package messaging_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/infra/database"
	"wharf/internal/infra/statuses"
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

func (f *fixture) outcome(status, callback string) []*statuses.Outcome {
	return statuses.Reduce([]platform.Status{{ID: "wamid.x", Status: status, Timestamp: "1700000000", BizOpaqueCallbackData: callback}}, time.Now())
}

// race applies first in one transaction, then, while it holds the row,
// second in another (which waits), commits the first and then the second.
func (f *fixture) apply(ctx context.Context, tx *gorm.DB, outcomes []*statuses.Outcome) ([]*statuses.Outcome, error) {
	res, err := f.svc.ApplyStatuses(ctx, tx, inbound.StatusBatch{OrganizationID: f.org, AccountID: f.acc, Outcomes: outcomes})
	return res.Unmatched, err
}

func (f *fixture) race(t *testing.T, first, second []*statuses.Outcome) string {
	ctx := context.Background()
	tx1 := f.db.Begin()
	if _, err := f.apply(ctx, tx1, first); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		tx2 := f.db.Begin()
		unknown, err := f.apply(ctx, tx2, second) // blocks on the row lock
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

// add stores another sent message of the fixture's contact with provider id
// pid.
func (f *fixture) add(t *testing.T, pid string) uuid.UUID {
	id := uuid.New()
	if err := f.db.Exec(`INSERT INTO messages (id, organization_id, contact_id, account_id, platform_message_id, direction, type, status, occurred_at)
		VALUES (?, ?, ?, ?, ?, 'outgoing', 'text', 'sent', now())`, id, f.org, f.contact, f.acc, pid).Error; err != nil {
		t.Fatal(err)
	}
	return id
}

// Two status batches naming the same messages in opposite orders must not
// deadlock. The planner is held to the plan large tables get (an index
// lookup per outcome, in the batch's order), under which the update alone
// locked rows in batch order: the first batch held a and waited for x
// (locked by a third transaction), the second held b and waited for a,
// and once x was free the first waited for b: "deadlock detected".
func TestStatusBatchesInOppositeOrdersDoNotDeadlock(t *testing.T) {
	f := newFixture(t, "wamid.x")
	a, b := f.add(t, "wamid.a"), f.add(t, "wamid.b")
	ctx := context.Background()
	// Enough rows, and the planner's alternatives off, for the plan of a
	// large table: an index lookup per outcome.
	if err := f.db.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, platform_message_id, direction, type, status, occurred_at)
		SELECT ?, ?, ?, 'wamid.filler' || g, 'outgoing', 'text', 'sent', now() FROM generate_series(1, 2000) g`, f.org, f.contact, f.acc).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.db.Exec(`ANALYZE messages`).Error; err != nil {
		t.Fatal(err)
	}
	batch := func(pids ...string) []*statuses.Outcome {
		var sts []platform.Status
		for _, pid := range pids {
			sts = append(sts, platform.Status{ID: pid, Status: "delivered", Timestamp: "1700000000"})
		}
		return statuses.Reduce(sts, time.Now())
	}
	errs := make(chan error, 2)
	run := func(outcomes []*statuses.Outcome) {
		tx := f.db.Begin()
		for _, plan := range []string{"enable_hashjoin", "enable_mergejoin", "enable_seqscan", "enable_bitmapscan"} {
			tx.Exec("SET LOCAL " + plan + " = off")
		}
		_, err := f.apply(ctx, tx, outcomes)
		if err != nil {
			tx.Rollback()
			errs <- err
			return
		}
		errs <- tx.Commit().Error
	}
	holder := f.db.Begin()
	if err := holder.Exec(`SELECT 1 FROM messages WHERE id = ? FOR UPDATE`, f.msg).Error; err != nil {
		t.Fatal(err)
	}
	go run(batch("wamid.a", "wamid.x", "wamid.b"))
	time.Sleep(300 * time.Millisecond) // the first batch now waits for x
	go run(batch("wamid.b", "wamid.a"))
	time.Sleep(300 * time.Millisecond) // the second batch now waits too
	if err := holder.Commit().Error; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a status batch failed: %v", err)
		}
	}
	for _, id := range []uuid.UUID{f.msg, a, b} {
		var status string
		f.db.Raw(`SELECT status FROM messages WHERE id = ?`, id).Scan(&status)
		if status != "delivered" {
			t.Errorf("message %s is %q, want delivered", id, status)
		}
	}
}
