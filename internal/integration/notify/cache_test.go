package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/integration/docframe"
	"wharf/internal/integration/notify"
	"wharf/internal/testenv"
)

// replica builds another process's notifications and framework over the
// bundle's database and rdb, with extra hooks after the notifications'.
func (b *bundle) replica(t *testing.T, rdb redis.UniversalClient, hooks ...docframe.Hook) *docframe.Service {
	t.Helper()
	svc := notify.New(notify.Deps{DB: b.f.DB, Enqueuer: b.q.Enqueuer, Sender: b.sender, Log: testenv.Quiet(), Now: b.clock.now,
		Redis: rdb, CacheMaxAge: time.Hour})
	t.Cleanup(svc.Close)
	frame, err := docframe.New(b.f.DB, b.f.Box, docframe.Options{Hooks: append([]docframe.Hook{svc}, hooks...), Events: svc,
		Log: testenv.Quiet(), Guards: append(notify.Guards(), docframe.Guard{Doctype: "Order",
			Rights: map[string]string{docframe.PermRead: "orders:read"}, Secrets: []string{"secret_code"}})})
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

func TestNotificationChangesAreSeenByTheNextEventInAnyProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	b := setup(t, func(d *notify.Deps) { d.Redis = rdb })
	other := b.replica(t, rdb)
	order := func() string {
		t.Helper()
		d, err := other.Insert(ctx, b.admin, b.org, "Order", obj(t, `{"customer": "Ada", "mobile": "+15550001111"}`))
		if err != nil {
			t.Fatal(err)
		}
		return d["name"].(string)
	}
	rowsFor := func(name string) []string {
		t.Helper()
		var out []string
		for _, r := range b.ledger(t) {
			if r.ReferenceName == name {
				out = append(out, r.Notification)
			}
		}
		return out
	}
	// The other process has learnt that Order's inserts have no
	// notification.
	order()
	if n := rowsFor(order()); len(n) != 0 {
		t.Fatalf("recorded %v without a notification", n)
	}
	if n := b.drain(t); n != 0 {
		t.Fatalf("%d tasks without a notification", n)
	}
	// One is created here: the other process's next insert fires it.
	b.notification(t, `{"notification_name": "new", "reference_doctype": "Order", "doctype_event": "After Insert",
		"template": "t", "field_name": "mobile"}`)
	if n := rowsFor(order()); len(n) != 1 || n[0] != "new" {
		t.Fatalf("the insert right after the notification's creation recorded %v, want [new]", n)
	}
	// Its send is woken at once, not left to the sweep.
	if n := b.drain(t); n != 1 {
		t.Errorf("ran %d send tasks after the insert, want 1", n)
	}
	// Disabled here, it stops there at once.
	if _, err := b.frame.Update(ctx, b.admin, b.org, notify.NotificationDoctype, "new", map[string]any{"disabled": 1}); err != nil {
		t.Fatal(err)
	}
	if n := rowsFor(order()); len(n) != 0 {
		t.Errorf("the insert right after the notification was disabled recorded %v", n)
	}
	if _, err := b.frame.Update(ctx, b.admin, b.org, notify.NotificationDoctype, "new", map[string]any{"disabled": 0}); err != nil {
		t.Fatal(err)
	}
	if n := rowsFor(order()); len(n) != 1 {
		t.Errorf("the insert right after the notification was enabled again recorded %v", n)
	}
	if err := b.frame.Delete(ctx, b.admin, b.org, notify.NotificationDoctype, "new"); err != nil {
		t.Fatal(err)
	}
	if n := rowsFor(order()); len(n) != 0 {
		t.Errorf("the insert right after the notification was deleted recorded %v", n)
	}
}

// refuseOnUpdate fails the on_update of the Platform Notification it
// names, after the notifications' after_insert ran in its transaction.
type refuseOnUpdate string

func (refuseOnUpdate) Doctypes() []string { return []string{notify.NotificationDoctype} }

func (r refuseOnUpdate) Handle(_ context.Context, _ *gorm.DB, ev docframe.Event, d *docframe.Doc) error {
	if ev == docframe.OnUpdate && d.Name == string(r) {
		return docframe.Validationf("refused")
	}
	return nil
}

// A notification's own events look notifications up through its
// transaction, never the cache: a notification on Platform Notification
// fires for itself, and one whose transaction rolled back is never seen.
func TestNotificationEventsReadTheirOwnTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	b := setup(t)
	frame := b.replica(t, rdb, refuseOnUpdate("boom"))
	insert := func(name string) error {
		_, err := frame.Insert(ctx, b.admin, b.org, notify.NotificationDoctype, obj(t, `{"notification_name": "`+name+`",
			"reference_doctype": "`+notify.NotificationDoctype+`", "doctype_event": "After Insert", "template": "t",
			"field_name": "field_name"}`))
		return err
	}
	// The organization's version exists once a notification changed.
	if _, err := frame.Insert(ctx, b.admin, b.org, notify.NotificationDoctype, obj(t, `{"notification_name": "first",
		"reference_doctype": "Order", "doctype_event": "After Insert", "template": "t", "field_name": "mobile"}`)); err != nil {
		t.Fatal(err)
	}
	if err := insert("boom"); err == nil {
		t.Fatal("the refusing hook did not refuse")
	}
	if err := insert("self"); err != nil {
		t.Fatal(err)
	}
	rows := b.ledger(t)
	if len(rows) != 1 || rows[0].Notification != "self" || rows[0].ReferenceName != "self" {
		t.Fatalf("ledger %+v, want one row: self for itself", rows)
	}
}
