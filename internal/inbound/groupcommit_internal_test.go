package inbound

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// blockedCommit returns a group committer on a fresh database whose
// inserts wait while the returned release has not been called (another
// transaction holds the table), so that requests pile up into batches, and
// the batches it stored.
func blockedCommit(t *testing.T) (g *groupCommit, f *testfactory.Factory, release func(), batches func() [][]models.InboundEvent) {
	t.Helper()
	db := testenv.DB(t)
	f = testfactory.New(t, db)
	var mu sync.Mutex
	var stored [][]models.InboundEvent
	g = &groupCommit{db: db, stored: func(_ context.Context, rows []models.InboundEvent) {
		mu.Lock()
		defer mu.Unlock()
		stored = append(stored, append([]models.InboundEvent(nil), rows...))
	}}
	tx := db.Begin()
	if err := tx.Exec("LOCK TABLE inbound_events IN EXCLUSIVE MODE").Error; err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { tx.Rollback() }) }
	t.Cleanup(release)
	return g, f, release, func() [][]models.InboundEvent {
		mu.Lock()
		defer mu.Unlock()
		return stored
	}
}

// waitQueued waits until n requests are with the committer: taken by a
// writer (blocked on the table) or pending.
func waitQueued(t *testing.T, g *groupCommit, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // that they queue, not how soon: a busy machine is slow
	for {
		g.mu.Lock()
		got := g.queued
		g.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func event(org, account uuid.UUID, key string) models.InboundEvent {
	return models.InboundEvent{OrganizationID: org, AccountID: account, ContactKey: key, EventType: EventStatuses,
		Payload: []byte(`{}`), ReceivedAt: time.Now().UTC()}
}

// Requests that arrive while the writers are busy are written together:
// 50 concurrent webhooks take a handful of INSERTs, not 50, and each is
// answered only once its rows are stored (with their ids).
func TestGroupCommitBatchesConcurrentWrites(t *testing.T) {
	t.Parallel()
	g, f, release, batches := blockedCommit(t)
	org := f.Org()
	acc := f.Account(org.ID)
	const n = 50
	errs := make([]error, n)
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows := []models.InboundEvent{event(org.ID, acc.ID, "")}
			errs[i] = g.write(rows)
			ids[i] = rows[0].ID
		}()
	}
	waitQueued(t, g, n)
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil || ids[i] == 0 {
			t.Fatalf("request %d: %v, id %d", i, err, ids[i])
		}
	}
	if got := f.Count("inbound_events", "account_id = ?", acc.ID); got != n {
		t.Fatalf("%d rows stored, want %d", got, n)
	}
	// The writers' first batches, blocked on the table, then whatever piled
	// up meanwhile in at most one batch per writer.
	if b := batches(); len(b) > 2*maxWriters {
		t.Fatalf("%d batches for %d requests, want at most %d", len(b), n, 2*maxWriters)
	}
	// A writer answers its last batch's requests before it looks for more
	// and stops, so the callers may return a moment before it does: every
	// writer must stop, but not before the last answer (make test saw 1 left).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		writers, pending := g.writers, len(g.pending)
		g.mu.Unlock()
		if writers == 0 && pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the load: %d writers, %d pending", writers, pending)
		}
	}
}

// A request that cannot be stored (its account was deleted a moment ago)
// fails alone: the other webhooks of its batch are stored and answered.
func TestGroupCommitFailsOnlyTheRequestThatCannotBeStored(t *testing.T) {
	t.Parallel()
	g, f, release, batches := blockedCommit(t)
	org := f.Org()
	acc := f.Account(org.ID)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		account := acc.ID
		if i == 7 {
			account = uuid.New() // no such account: the foreign key refuses it
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.write([]models.InboundEvent{event(org.ID, account, "")})
		}()
	}
	waitQueued(t, g, len(errs))
	release()
	wg.Wait()
	for i, err := range errs {
		if (err != nil) != (i == 7) {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if got := f.Count("inbound_events", "account_id = ?", acc.ID); got != 9 {
		t.Fatalf("%d rows stored, want 9", got)
	}
	rows := 0
	for _, b := range batches() {
		rows += len(b)
	}
	if rows != 9 {
		t.Fatalf("the stored callback saw %d rows, want the 9 stored", rows)
	}
}
