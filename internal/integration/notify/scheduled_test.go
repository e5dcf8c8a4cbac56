package notify_test

import (
	"context"
	"sort"
	"testing"
	"time"
)

const dataListScript = `{"notification_name": "reminders", "notification_type": "Scheduler Event", "reference_doctype": "Order",
	"event_frequency": "Cron", "cron_format": "* * * * *", "template": "reminder",
	"fields": [{"field_name": "name"}, {"field_name": "amount"}],
	"condition": "if doc.status == \"Open\":\n    doc._data_list = [{\"phone\": doc.mobile, \"name\": doc.customer, \"amount\": doc.amount}, {\"phone\": \"+15550009999\", \"name\": \"Boss of \" + doc.customer, \"amount\": 0}]\n"}`

func TestCronDataListSendsOncePerObjectPerTick(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.notification(t, dataListScript)
	// Hourly: not due at 10:17.
	b.notification(t, `{"notification_name": "hourly", "notification_type": "Scheduler Event", "reference_doctype": "Order",
		"event_frequency": "Hourly", "template": "hourly", "field_name": "mobile", "condition": "True"}`)
	b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "amount": 12.5}`)
	b.order(t, `{"customer": "Bob", "mobile": "+15550002222", "amount": 7, "status": "Closed"}`)
	b.order(t, `{"customer": "Cy", "mobile": "+15550003333", "amount": 3}`)
	tick := time.Date(2026, 3, 4, 10, 17, 0, 0, time.UTC)
	runs, err := b.svc.Tick(ctx, tick)
	if err != nil || runs != 1 {
		t.Fatalf("tick: %d runs, %v", runs, err)
	}
	// The tick fired twice (a leadership hand-over): one run.
	if runs, err := b.svc.Tick(ctx, tick.Add(20*time.Second)); err != nil || runs != 1 {
		t.Fatalf("second tick: %d runs, %v", runs, err)
	}
	b.drain(t)
	var got []string
	for _, m := range b.sender.all() {
		if m.Template != "reminder" || m.ReferenceDoctype != "Order" {
			t.Errorf("sent %+v", m)
		}
		got = append(got, m.To+" "+m.Parameters[0]+" "+m.Parameters[1])
	}
	sort.Strings(got)
	want := []string{"+15550001111 Ada 12.5", "+15550003333 Cy 3", "+15550009999 Boss of Ada 0", "+15550009999 Boss of Cy 0"}
	if len(got) != len(want) {
		t.Fatalf("sent %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sent %v, want %v", got, want)
			break
		}
	}
	// The run retried (its task ran again): no new sends.
	if err := b.svc.Run(ctx, b.org, "reminders", tick); err != nil {
		t.Fatal(err)
	}
	b.drain(t)
	if n := len(b.sender.all()); n != 4 {
		t.Fatalf("a retried run sent again: %d sends", n)
	}
	// The next minute is another tick: the cron fires again.
	if _, err := b.svc.Tick(ctx, tick.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	b.drain(t)
	if n := len(b.sender.all()); n != 8 {
		t.Fatalf("next minute: %d sends, want 8", n)
	}
	// At 11:00 the hourly one is due too: one send per open or closed
	// (not cancelled) order whose last expression is true.
	if _, err := b.svc.Tick(ctx, time.Date(2026, 3, 4, 11, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	b.drain(t)
	hourly := 0
	for _, m := range b.sender.all() {
		if m.Template == "hourly" {
			hourly++
		}
	}
	if hourly != 3 {
		t.Errorf("hourly sends %d, want 3", hourly)
	}
}

func TestScheduledRunSkipsCancelledAndDisabled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.notification(t, `{"notification_name": "all", "notification_type": "Scheduler Event", "reference_doctype": "Order",
		"event_frequency": "All", "template": "t", "field_name": "mobile", "fields": [{"field_name": "customer"}]}`)
	b.notification(t, `{"notification_name": "off", "notification_type": "Scheduler Event", "reference_doctype": "Order",
		"event_frequency": "All", "template": "t", "field_name": "mobile", "disabled": 1}`)
	live := b.order(t, `{"customer": "Ada", "mobile": "+15550001111"}`)
	gone := b.order(t, `{"customer": "Bob", "mobile": "+15550002222"}`)
	if _, err := b.frame.Submit(ctx, b.admin, b.org, "Order", gone); err != nil {
		t.Fatal(err)
	}
	if _, err := b.frame.Cancel(ctx, b.admin, b.org, "Order", gone); err != nil {
		t.Fatal(err)
	}
	if runs, err := b.svc.Tick(ctx, time.Date(2026, 3, 4, 10, 17, 0, 0, time.UTC)); err != nil || runs != 1 {
		t.Fatalf("tick: %d, %v", runs, err)
	}
	b.drain(t)
	sent := b.sender.all()
	if len(sent) != 1 || sent[0].ReferenceName != live || sent[0].Parameters[0] != "Ada" {
		t.Fatalf("sent %+v", sent)
	}
}

// Days Before and Days After: once a day, the documents whose date field
// falls that many days after (before) the day get the message, once each
// even when the day's run is tried every hour.
func TestDaysBeforeAndAfter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.notification(t, `{"notification_name": "due soon", "reference_doctype": "Order", "doctype_event": "Days Before",
		"date_changed": "due", "days_in_advance": 3, "template": "due_soon", "field_name": "mobile", "fields": [{"field_name": "customer"}]}`)
	b.notification(t, `{"notification_name": "overdue", "reference_doctype": "Order", "doctype_event": "Days After",
		"date_changed": "due", "days_in_advance": 1, "template": "overdue", "field_name": "mobile", "fields": [{"field_name": "customer"}],
		"condition": "doc.status == \"Open\""}`)
	b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "due": "2026-03-07"}`)                    // 3 days after the 4th
	b.order(t, `{"customer": "Bob", "mobile": "+15550002222", "due": "2026-03-03"}`)                    // the day before
	b.order(t, `{"customer": "Cy", "mobile": "+15550003333", "due": "2026-03-03", "status": "Closed"}`) // condition false
	b.order(t, `{"customer": "Dee", "mobile": "+15550004444", "due": "2026-03-08"}`)                    // another day
	for _, hour := range []int{0, 1, 7} {                                                               // the day's run, tried each hour
		if _, err := b.svc.Tick(ctx, time.Date(2026, 3, 4, hour, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		b.drain(t)
	}
	if err := b.svc.Run(ctx, b.org, "due soon", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)); err != nil { // a retried run
		t.Fatal(err)
	}
	b.drain(t)
	var got []string
	for _, m := range b.sender.all() {
		got = append(got, m.Template+" "+m.To+" "+m.Parameters[0])
	}
	sort.Strings(got)
	want := []string{"due_soon +15550001111 Ada", "overdue +15550002222 Bob"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("sent %v, want %v", got, want)
	}
}
