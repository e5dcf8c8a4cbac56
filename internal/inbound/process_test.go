package inbound_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/infra/statuses"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// Processing hands each contact's messages to the message consumers in
// arrival order, exactly once, and status batches down the chain of status
// consumers.
func TestProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		org      *testfactory.Org
		account  models.PlatformAccount
		first    *messages
		second   *messages
		matching *statusMatcher
		rest     *statusMatcher
	}
	setup := func(t *testing.T) (*inbound.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		b := &testBundle{f: f, first: &messages{name: "first", seen: map[string]bool{}, fail: map[string]bool{}},
			second: &messages{name: "second"}, matching: &statusMatcher{name: "matching", match: "wamid.mine"}, rest: &statusMatcher{name: "rest"}}
		svc, _ := newService(t, f, b.first, b.second, b.matching, b.rest)
		b.org = f.Org()
		b.account = f.Account(b.org.ID)
		return svc, b
	}
	deliver := func(t *testing.T, svc *inbound.Service, bundle *testBundle, msgs []message, sts []status) {
		t.Helper()
		if _, err := intake(svc, "203.0.113.1", globalSecret, webhookBody(bundle.account.BusinessAccountID, bundle.account.PhoneNumberID, msgs, sts)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("AContactsMessagesAreConsumedInOrderByEveryConsumer", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		deliver(t, svc, bundle, []message{{"wamid.1", "15550001111", "a"}, {"wamid.2", "15550001111", "b"}}, nil)
		deliver(t, svc, bundle, []message{{"wamid.3", "15550001111", "c"}}, nil)
		if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550001111"); err != nil {
			t.Fatal(err)
		}
		want := "[wamid.1/+15550001111 wamid.2/+15550001111 wamid.3/+15550001111]"
		if got := fmt.Sprint(bundle.first.consumed()); got != want {
			t.Errorf("first consumer got %s, want %s", got, want)
		}
		if got := fmt.Sprint(bundle.second.consumed()); got != want {
			t.Errorf("second consumer got %s, want %s", got, want)
		}
		var c models.Contact
		if err := bundle.f.DB.Take(&c, "organization_id = ? AND phone_number = '+15550001111'", bundle.org.ID).Error; err != nil ||
			c.ProfileName != "Profile 15550001111" || c.AccountID == nil || *c.AccountID != bundle.account.ID {
			t.Errorf("sender %+v, %v: want a contact with the profile name and the account", c, err)
		}
		// Processing again consumes nothing more.
		if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550001111"); err != nil {
			t.Fatal(err)
		}
		if len(bundle.first.consumed()) != 3 || bundle.f.Count("inbound_events", "processed_at IS NULL") != 0 {
			t.Errorf("reprocessing consumed %d messages; pending events %d", len(bundle.first.consumed()), bundle.f.Count("inbound_events", "processed_at IS NULL"))
		}
	})

	t.Run("AMessageSeenBeforeStopsAtTheConsumerThatSawIt", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		bundle.first.seen["wamid.dup"] = true
		deliver(t, svc, bundle, []message{{"wamid.dup", "15550001111", "again"}, {"wamid.new", "15550001111", "new"}}, nil)
		if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550001111"); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(bundle.second.consumed()); got != "[wamid.new/+15550001111]" {
			t.Errorf("second consumer got %s, want only the new message", got)
		}
	})

	t.Run("AFailingEventHoldsBackTheContactUntilItIsSetAside", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		bundle.first.fail["wamid.bad"] = true
		deliver(t, svc, bundle, []message{{"wamid.bad", "15550001111", "x"}}, nil)
		deliver(t, svc, bundle, []message{{"wamid.next", "15550001111", "y"}}, nil)
		deliver(t, svc, bundle, []message{{"wamid.other", "15550002222", "z"}}, nil)
		for attempt := 1; attempt < 5; attempt++ {
			if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550001111"); err == nil {
				t.Fatalf("attempt %d: no error", attempt)
			}
			if len(bundle.first.consumed()) != 0 || bundle.f.Count("inbound_events", "attempts = ? AND processed_at IS NULL", attempt) != 1 {
				t.Fatalf("attempt %d: consumed %v; the failing event must be retried and the next one wait", attempt, bundle.first.consumed())
			}
		}
		// Another contact does not wait.
		if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550002222"); err != nil {
			t.Fatal(err)
		}
		if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550001111"); err != nil {
			t.Fatalf("fifth attempt: %v; want the event set aside", err)
		}
		if got := fmt.Sprint(bundle.first.consumed()); got != "[wamid.other/+15550002222 wamid.next/+15550001111]" {
			t.Errorf("consumed %s", got)
		}
		if bundle.f.Count("inbound_events", "attempts = 5 AND processed_at IS NOT NULL AND last_error LIKE '%cannot consume wamid.bad%'") != 1 {
			t.Error("want the failing event set aside after five attempts, with its error")
		}
		if bundle.f.Count("messages", "") != 0 {
			t.Error("a failed event left rows behind")
		}
	})

	t.Run("ASenderThatIsNotANumberMakesNoContact", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		deliver(t, svc, bundle, []message{{"wamid.abc", "abc", "x"}}, nil)
		if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "abc"); err != nil {
			t.Fatalf("process: %v; want the event set aside, not retried", err)
		}
		if len(bundle.first.consumed()) != 0 || bundle.f.Count("contacts", "") != 0 {
			t.Errorf("consumed %v, %d contacts: want no message consumed and no contact made", bundle.first.consumed(), bundle.f.Count("contacts", ""))
		}
		if bundle.f.Count("inbound_events", "attempts = 1 AND processed_at IS NOT NULL AND last_error LIKE '%not a phone number%'") != 1 {
			t.Error("want the event set aside at its first attempt, with its reason")
		}
	})

	// A contact's only waiting event is applied without a savepoint (one
	// round trip and a subtransaction less a message); when it fails, its
	// transaction rolls back whole and the failure is still counted once.
	t.Run("ALoneEventTakesNoSavepointAndItsFailureIsCountedOnce", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		var mu sync.Mutex
		var savepoints int
		if err := bundle.f.DB.Callback().Raw().After("gorm:raw").Register("test:savepoints", func(db *gorm.DB) {
			if strings.HasPrefix(db.Statement.SQL.String(), "SAVEPOINT") {
				mu.Lock()
				savepoints++
				mu.Unlock()
			}
		}); err != nil {
			t.Fatal(err)
		}
		deliver(t, svc, bundle, []message{{"wamid.ok", "15550001111", "a"}}, nil)
		if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550001111"); err != nil {
			t.Fatal(err)
		}
		bundle.first.fail["wamid.bad"] = true
		deliver(t, svc, bundle, []message{{"wamid.bad", "15550002222", "b"}}, nil)
		for attempt := 1; attempt <= 2; attempt++ {
			if err := svc.Process(ctx, bundle.org.ID, bundle.account.ID, "15550002222"); err == nil || !strings.Contains(err.Error(), "cannot consume wamid.bad") {
				t.Fatalf("attempt %d: %v, want the consumer's error", attempt, err)
			}
			if n := bundle.f.Count("inbound_events", "attempts = ? AND processed_at IS NULL AND last_error LIKE '%cannot consume wamid.bad%'", attempt); n != 1 {
				t.Fatalf("attempt %d: %d events with that count, want the failure counted once and the event pending", attempt, n)
			}
		}
		// The failed event's transaction rolled back whole: no contact.
		if n := bundle.f.Count("contacts", "phone_number = '+15550002222'"); n != 0 {
			t.Errorf("%d contacts for the failed event's sender, want its transaction rolled back", n)
		}
		if got := fmt.Sprint(bundle.first.consumed()); got != "[wamid.ok/+15550001111]" {
			t.Errorf("consumed %s", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if savepoints != 0 {
			t.Errorf("%d savepoints for batches of one event, want none", savepoints)
		}
	})

	t.Run("StatusesGoDownTheChainOfConsumers", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		deliver(t, svc, bundle, nil, []status{{"wamid.mine", "sent", ""}, {"wamid.mine", "read", ""}, {"wamid.else", "delivered", ""}})
		deliver(t, svc, bundle, nil, []status{{"wamid.else", "read", ""}})
		if err := svc.ProcessStatuses(ctx, bundle.org.ID, bundle.account.ID); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(bundle.matching.got); got != "[[wamid.mine/read wamid.else/read]]" {
			t.Errorf("first status consumer got %s: want one batch, one outcome per message", got)
		}
		if got := fmt.Sprint(bundle.rest.got); got != "[[wamid.else/read]]" {
			t.Errorf("second status consumer got %s: want what the first did not match", got)
		}
		if bundle.rest.all != 2 {
			t.Errorf("the second consumer saw %d outcomes of the whole batch, want 2", bundle.rest.all)
		}
		if bundle.f.Count("inbound_events", "processed_at IS NULL") != 0 {
			t.Error("status events left pending")
		}
		if err := svc.ProcessStatuses(ctx, bundle.org.ID, bundle.account.ID); err != nil || len(bundle.matching.got) != 1 {
			t.Errorf("a second run applied %d batches, %v; want nothing more", len(bundle.matching.got), err)
		}
	})
}

// statusMatcher is a StatusConsumer that matches the outcomes of one
// provider message id and passes the others on.
type statusMatcher struct {
	name  string
	match string
	got   [][]string
	all   int
}

func (s *statusMatcher) ConsumerName() string { return s.name }

func (s *statusMatcher) ApplyStatuses(_ context.Context, _ *gorm.DB, b inbound.StatusBatch) (inbound.StatusResult, error) {
	var got []string
	var rest []*statuses.Outcome
	for _, o := range b.Outcomes {
		got = append(got, o.PlatformID+"/"+string(o.Final))
		if o.PlatformID != s.match {
			rest = append(rest, o)
		}
	}
	s.got, s.all = append(s.got, got), len(b.All)
	return inbound.StatusResult{Unmatched: rest}, nil
}

// lockingMatcher is a StatusConsumer that, during its first batch, runs
// during (while that batch's transaction holds the account's lock).
type lockingMatcher struct {
	statusMatcher
	during func()
	once   sync.Once
}

func (s *lockingMatcher) ApplyStatuses(ctx context.Context, tx *gorm.DB, b inbound.StatusBatch) (inbound.StatusResult, error) {
	s.once.Do(s.during)
	return s.statusMatcher.ApplyStatuses(ctx, tx, b)
}

// One task at a time drains an account's statuses: a second task returns
// at once instead of waiting for the first's batch (holding a worker slot
// and a connection), and the events it was woken for — stored while the
// first held the account — are applied by the first before it returns.
func TestStatusTasksOfOneAccountDoNotWaitOnEachOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	account := f.Account(org.ID)
	var svc *inbound.Service
	deliver := func(sts []status) {
		t.Helper()
		if _, err := intake(svc, "203.0.113.1", globalSecret, webhookBody(account.BusinessAccountID, account.PhoneNumberID, nil, sts)); err != nil {
			t.Fatal(err)
		}
	}
	var second time.Duration
	var secondErr error
	m := &lockingMatcher{statusMatcher: statusMatcher{name: "matching"}}
	m.during = func() {
		// A webhook arrives while the first batch runs, and its task runs.
		deliver([]status{{"wamid.2", "delivered", ""}})
		start := time.Now()
		// Bounded: a task that waited for the first would wait forever
		// here, the first waiting for it.
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		secondErr = svc.ProcessStatuses(wctx, org.ID, account.ID)
		second = time.Since(start)
	}
	svc, _ = newService(t, f, m)
	deliver([]status{{"wamid.1", "delivered", ""}})
	if err := svc.ProcessStatuses(ctx, org.ID, account.ID); err != nil {
		t.Fatal(err)
	}
	if secondErr != nil || second > 2*time.Second {
		t.Errorf("the second task took %s (%v); want it to return at once", second, secondErr)
	}
	if got := fmt.Sprint(m.got); got != "[[wamid.1/delivered] [wamid.2/delivered]]" {
		t.Errorf("batches applied: %s; want the first task to apply both webhooks, in order", got)
	}
	if n := f.Count("inbound_events", "processed_at IS NULL"); n != 0 {
		t.Errorf("%d status events left pending", n)
	}
}
