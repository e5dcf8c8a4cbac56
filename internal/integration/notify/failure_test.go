package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wharf/internal/integration/notify"
)

// TestConditionOverMemoryFailsOnlyThatNotification: a DocType Event whose
// condition allocates about 300 MB sends nothing, its ledger row fails
// with the reason, the notification shows the failure to its Admin
// (last_error, last_error_at), the job succeeds (nothing is retried), and
// another notification of the same event still sends.
func TestConditionOverMemoryFailsOnlyThatNotification(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, `{"notification_name": "hog", "reference_doctype": "Order", "doctype_event": "After Insert",
		"template": "t", "field_name": "mobile", "condition": "len(\"x\" * 300000000) > 0"}`)
	b.notification(t, `{"notification_name": "small", "reference_doctype": "Order", "doctype_event": "After Insert",
		"template": "t", "field_name": "mobile", "condition": "doc.amount > 1"}`)
	order := b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "amount": 3}`)
	b.drain(t) // fails the test should a task fail (and so be retried)
	sent := b.sender.all()
	if len(sent) != 1 || sent[0].To != "+15550001111" {
		t.Fatalf("sent %+v, want the small notification's message only", sent)
	}
	const reason = "condition: condition exceeded its memory budget of 16 MB"
	var hog wharfnotifyRow
	for _, r := range b.ledger(t) {
		if r.Notification == "hog" {
			hog = wharfnotifyRow(r)
		}
	}
	if hog.Status != "failed" || hog.Error != reason {
		t.Fatalf("hog's ledger row: %+v", hog)
	}
	n := b.get(t, notify.NotificationDoctype, "hog")
	if n["last_error"] != "Order "+order+": "+reason {
		t.Errorf("last_error %q", n["last_error"])
	}
	if n["last_error_at"] != b.clock.now().UTC().Format(time.DateTime) {
		t.Errorf("last_error_at %v, want %s", n["last_error_at"], b.clock.now().UTC().Format(time.DateTime))
	}
	if s := b.get(t, notify.NotificationDoctype, "small"); s["last_error"] != nil {
		t.Errorf("small has an error: %v", s["last_error"])
	}
	// The task again (a duplicate delivery): nothing more.
	if err := b.svc.Deliver(context.Background(), b.org, hog.ID); err != nil || len(b.sender.all()) != 1 {
		t.Fatalf("again: %v, %d sends", err, len(b.sender.all()))
	}
}

type wharfnotifyRow ledgerRow

// TestScheduledRunStopsAtABudget: a Scheduler Event whose condition
// exceeds its memory budget stops its run at the first document (the
// others would cost as much), plans nothing, and says so on the
// notification; the run succeeds (its next tick is a new run).
func TestScheduledRunStopsAtABudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, `{"notification_name": "hog", "notification_type": "Scheduler Event", "reference_doctype": "Order",
		"event_frequency": "All", "template": "t", "field_name": "mobile", "condition": "len(\"x\" * 300000000) > 0"}`)
	// A run reads its documents by name.
	first := min(b.order(t, `{"customer": "Ada", "mobile": "+15550001111"}`), b.order(t, `{"customer": "Bob", "mobile": "+15550002222"}`))
	if err := b.svc.Run(context.Background(), b.org, "hog", b.clock.now()); err != nil {
		t.Fatal(err)
	}
	if rows := b.ledger(t); len(rows) != 0 {
		t.Fatalf("ledger %+v", rows)
	}
	want := "Order " + first + ": condition: condition exceeded its memory budget of 16 MB (the run stopped there)"
	if got := b.get(t, notify.NotificationDoctype, "hog")["last_error"]; got != want {
		t.Errorf("last_error %q, want %q", got, want)
	}
}

// TestScheduledRunPlansAtMostLimitsSends: a run stops before it plans
// more sends than Limits.Sends, and says so on the notification.
func TestScheduledRunPlansAtMostLimitsSends(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *notify.Deps) { d.Limits.Sends = 3 })
	b.notification(t, `{"notification_name": "fan-out", "notification_type": "Scheduler Event", "reference_doctype": "Order",
		"event_frequency": "All", "template": "t",
		"condition": "doc._data_list = [{\"phone\": doc.mobile}, {\"phone\": \"+15550009999\"}]"}`)
	ada := b.order(t, `{"customer": "Ada", "mobile": "+15550001111"}`)
	bob := b.order(t, `{"customer": "Bob", "mobile": "+15550002222"}`)
	first, second := min(ada, bob), max(ada, bob) // a run reads its documents by name
	if err := b.svc.Run(context.Background(), b.org, "fan-out", b.clock.now()); err != nil {
		t.Fatal(err)
	}
	rows := b.ledger(t)
	if len(rows) != 2 || rows[0].ReferenceName != first || rows[1].ReferenceName != first {
		t.Fatalf("ledger %+v, want the first order's two sends", rows)
	}
	want := "Order " + second + ": the run would plan more than 3 sends (the run stopped there)"
	if got := b.get(t, notify.NotificationDoctype, "fan-out")["last_error"]; got != want {
		t.Errorf("last_error %q, want %q", got, want)
	}
}

// TestEvaluatorUnavailableIsRetried: when no evaluator process can start,
// the condition did not run: the task fails (asynq retries it), the row
// stays pending and nothing is blamed on the notification.
func TestEvaluatorUnavailableIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *notify.Deps) { d.Evaluator.Command = []string{"/nonexistent/wharf-evaluator"} })
	b.notification(t, `{"notification_name": "n", "reference_doctype": "Order", "doctype_event": "After Insert",
		"template": "t", "field_name": "mobile", "condition": "doc.amount > 1"}`)
	b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "amount": 3}`)
	rows := b.ledger(t)
	if len(rows) != 1 {
		t.Fatalf("ledger %+v", rows)
	}
	err := b.svc.Deliver(context.Background(), b.org, rows[0].ID)
	if err == nil || !strings.Contains(err.Error(), "the condition evaluator is unavailable") {
		t.Fatalf("deliver: %v", err)
	}
	if rows := b.ledger(t); rows[0].Status != "pending" || len(b.sender.all()) != 0 {
		t.Fatalf("ledger %+v, sent %+v", rows, b.sender.all())
	}
	if got := b.get(t, notify.NotificationDoctype, "n")["last_error"]; got != nil {
		t.Errorf("last_error %q", got)
	}
}
