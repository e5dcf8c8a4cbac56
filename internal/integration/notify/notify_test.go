package notify_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/internal/integration/notify"
)

const onInsert = `{"notification_name": "big order", "notification_type": "DocType Event", "reference_doctype": "Order",
	"doctype_event": "After Insert", "template": "order_received", "platform_account": "Main", "field_name": "mobile",
	"condition": "doc.amount > 100 and doc.status == \"Open\"",
	"fields": [{"field_name": "customer"}, {"field_name": "amount"}, {"field_name": "due"}, {"field_name": "name"}],
	"custom_attachment": 1, "attach": "https://files.example.test/terms.pdf?v=2",
	"button_fields": "name", "button_url_template": "orders/{{1}}",
	"set_property_after_alert": "notified", "property_value": "1"}`

func TestAfterInsertSendsMappedTemplateAndSetsProperty(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, onInsert)
	big := b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "amount": 150.5, "due": "2026-03-01"}`)
	small := b.order(t, `{"customer": "Bob", "mobile": "+15550002222", "amount": 50}`)
	if n := b.drain(t); n != 2 {
		t.Errorf("ran %d send tasks, want 2 (one per insert)", n)
	}
	sent := b.sender.all()
	if len(sent) != 1 {
		t.Fatalf("sent %+v, want one message", sent)
	}
	want := notify.TemplateSend{Account: "Main", To: "+15550001111", Template: "order_received",
		Parameters: []string{"Ada", "150.5", "2026-03-01", big}, ButtonURLParam: "orders/" + big,
		Attachment:       &notify.Attachment{URL: "https://files.example.test/terms.pdf?v=2", Filename: "terms.pdf"},
		ReferenceDoctype: "Order", ReferenceName: big}
	got := sent[0]
	got.IdempotencyKey = ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sent\n%+v\nwant\n%+v", got, want)
	}
	if d := b.get(t, "Order", big); d["notified"] != int64(1) {
		t.Errorf("notified = %#v after the send, want 1", d["notified"])
	}
	if d := b.get(t, "Order", small); d["notified"] != int64(0) {
		t.Errorf("the order the condition refused was changed: %#v", d["notified"])
	}
	rows := b.ledger(t)
	byName := map[string]string{}
	for _, r := range rows {
		byName[r.ReferenceName] = r.Status + "/" + r.Error
		if r.ReferenceName == big && (r.MessageName != "MSG-A" || r.PropertyPending || r.ID.String() != sent[0].IdempotencyKey) {
			t.Errorf("sent row %+v", r)
		}
	}
	if len(rows) != 2 || byName[big] != "sent/" || byName[small] != "skipped/condition is false" {
		t.Errorf("ledger %+v", rows)
	}
}

func TestSetPropertyDoesNotRetriggerItsNotification(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Fires on every save, with no condition: without the guard, its own
	// property save would fire it again, for ever.
	b.notification(t, `{"notification_name": "saved", "reference_doctype": "Order", "doctype_event": "After Save",
		"template": "order_saved", "field_name": "mobile", "fields": [{"field_name": "saves"}],
		"set_property_after_alert": "saves", "property_value": "7"}`)
	// Another notification on After Save does see the property save, as
	// in Frappe (only the one that set it is held back).
	b.notification(t, `{"notification_name": "tracker", "reference_doctype": "Order", "doctype_event": "After Save",
		"template": "order_tracked", "field_name": "mobile", "condition": "doc.saves == 7"}`)
	name := b.order(t, `{"customer": "Ada", "mobile": "+15550001111"}`)
	b.drain(t)
	if len(b.sender.all()) != 0 {
		t.Fatalf("an insert is not a save: sent %+v", b.sender.all())
	}
	if _, err := b.frame.Update(context.Background(), b.admin, b.org, "Order", name, obj(t, `{"track": "x"}`)); err != nil {
		t.Fatal(err)
	}
	b.drain(t)
	sent := b.sender.all()
	if len(sent) != 2 || sent[0].Template != "order_saved" || sent[0].Parameters[0] != "0" || sent[1].Template != "order_tracked" {
		t.Fatalf("sent %+v: want order_saved once (saves 0) then order_tracked once", sent)
	}
	if d := b.get(t, "Order", name); d["saves"] != int64(7) {
		t.Errorf("saves = %#v, want 7 (coerced to Int)", d["saves"])
	}
	rows := b.ledger(t)
	if len(rows) != 3 {
		t.Errorf("ledger %+v: want saved (sent), tracker on the user's save (skipped), tracker on the property save (sent)", rows)
	}
}

func TestConditionErrorSendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, `{"notification_name": "broken", "reference_doctype": "Order", "doctype_event": "After Insert",
		"template": "t", "field_name": "mobile", "condition": "doc.amount + doc.customer > 1"}`)
	b.notification(t, `{"notification_name": "phoneless", "reference_doctype": "Order", "doctype_event": "After Insert",
		"template": "t", "field_name": "mobile"}`)
	b.order(t, `{"customer": "Ada", "amount": 3}`)
	b.drain(t)
	if len(b.sender.all()) != 0 {
		t.Fatalf("sent %+v", b.sender.all())
	}
	rows := b.ledger(t)
	if len(rows) != 2 || rows[0].Status != "failed" || rows[1].Status != "failed" {
		t.Fatalf("ledger %+v", rows)
	}
	for _, r := range rows {
		switch r.Notification {
		case "broken":
			// 3 is stored as the JSON number 3 and reads back as an int.
			if r.Error != "condition: unknown binary op: int + string" {
				t.Errorf("broken: %q", r.Error)
			}
		case "phoneless":
			if r.Error != "no phone number in mobile" {
				t.Errorf("phoneless: %q", r.Error)
			}
		}
	}
}

func TestEventsSubmitCancelDeleteAndDisabled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, ev := range []string{"After Submit", "After Cancel", "Before Delete"} {
		b.notification(t, `{"notification_name": "`+ev+`", "reference_doctype": "Order", "doctype_event": "`+ev+`",
			"template": "t", "field_name": "mobile", "fields": [{"field_name": "docstatus"}]}`)
	}
	b.notification(t, `{"notification_name": "off", "reference_doctype": "Order", "doctype_event": "After Submit",
		"template": "t", "field_name": "mobile", "disabled": 1}`)
	ctx := context.Background()
	name := b.order(t, `{"customer": "Ada", "mobile": "+15550001111"}`)
	if _, err := b.frame.Submit(ctx, b.admin, b.org, "Order", name); err != nil {
		t.Fatal(err)
	}
	if _, err := b.frame.Cancel(ctx, b.admin, b.org, "Order", name); err != nil {
		t.Fatal(err)
	}
	if err := b.frame.Delete(ctx, b.admin, b.org, "Order", name); err != nil {
		t.Fatal(err)
	}
	b.drain(t)
	var got []string
	for _, m := range b.sender.all() {
		got = append(got, m.Parameters[0])
	}
	// docstatus as it was at each event: 1 at submit, 2 at cancel and at
	// the delete of the cancelled document.
	if !reflect.DeepEqual(got, []string{"1", "2", "2"}) {
		t.Errorf("sent docstatus %v", got)
	}
}

func TestRetriedSendDoesNotSendTwice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, onInsert)
	b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "amount": 500}`)
	rows := b.ledger(t)
	if len(rows) != 1 || rows[0].Status != "pending" {
		t.Fatalf("ledger %+v", rows)
	}
	ctx := context.Background()
	// The task runs, then runs again (a retry after a lost answer, a
	// duplicate, a second worker).
	for range 3 {
		if err := b.svc.Deliver(ctx, b.org, rows[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	b.drain(t)
	if n := len(b.sender.all()); n != 1 {
		t.Fatalf("sent %d times", n)
	}
	// Another organization's id for the row: nothing.
	other := b.f.Org().ID
	if err := b.svc.Deliver(ctx, other, rows[0].ID); err != nil || len(b.sender.all()) != 1 {
		t.Fatalf("other organization: %v, %d sends", err, len(b.sender.all()))
	}

	// A worker that died after the claim leaves its row sending: it is
	// never sent again, and the sweep calls it unknown.
	b.clock.add(time.Second)
	b.order(t, `{"customer": "Bob", "mobile": "+15550002222", "amount": 500}`)
	b.q.Inspector.DeleteAllPendingTasks("default")
	var id string
	b.f.DB.Raw(`UPDATE wharfnotify_sends SET status = 'sending', updated_at = ? WHERE status = 'pending' RETURNING id`,
		b.clock.now()).Scan(&id)
	b.drain(t)
	b.clock.add(6 * time.Minute)
	if _, unknown, err := b.svc.Sweep(ctx); err != nil || unknown != 1 {
		t.Fatalf("sweep: %d unknown, %v", unknown, err)
	}
	b.drain(t)
	if n := len(b.sender.all()); n != 1 {
		t.Fatalf("sent %d times", n)
	}

	// A provider failure is recorded, not retried into a duplicate.
	b.sender.mu.Lock()
	b.sender.fail = errors.New("provider said 131026")
	b.sender.mu.Unlock()
	b.clock.add(time.Second)
	b.order(t, `{"customer": "Cy", "mobile": "+15550003333", "amount": 500}`)
	b.drain(t)
	var statuses []string
	for _, r := range b.ledger(t) {
		statuses = append(statuses, r.Status+":"+r.Error)
	}
	want := []string{"sent:", "unknown:the worker stopped during the send", "failed:provider said 131026"}
	if !reflect.DeepEqual(statuses, want) {
		t.Errorf("ledger %v, want %v", statuses, want)
	}
}

func TestLostTaskIsSwept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, onInsert)
	b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "amount": 500}`)
	// Redis lost the wake-up (or the process died after the commit).
	if _, err := b.q.Inspector.DeleteAllPendingTasks("default"); err != nil {
		t.Fatal(err)
	}
	b.clock.add(time.Minute)
	if requeued, _, err := b.svc.Sweep(context.Background()); err != nil || requeued != 1 {
		t.Fatalf("sweep requeued %d, %v", requeued, err)
	}
	b.drain(t)
	if n := len(b.sender.all()); n != 1 {
		t.Fatalf("sent %d", n)
	}
}

func TestNotificationsAreValidated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	base := func(extra string) string {
		return `{"notification_name": "n", "reference_doctype": "Order", "template": "t", "field_name": "mobile"` + extra + `}`
	}
	for body, msg := range map[string]string{
		base(`, "doctype_event": "After Insert", "condition": "doc.amount >"`):                                      "Condition: condition:1:13: got end of file",
		base(`, "doctype_event": "After Insert", "condition": "nope(doc)"`):                                         "undefined: nope",
		base(`, "doctype_event": "After Insert", "fields": [{"field_name": "customer"}, {"field_name": "colour"}]`): "Fields row 2: Order has no field colour",
		base(`, "doctype_event": "Days Before"`):                                                                    "Reference Date (date_changed) is required",
		base(`, "doctype_event": "Days After", "date_changed": "customer"`):                                         "customer is not a Date or Datetime field of Order",
		base(`, "doctype_event": "Days After", "date_changed": "due", "days_in_advance": -1`):                       "must be a whole number of days",
		base(``): "DocType Event is required",
		base(`, "doctype_event": "After Insert", "set_property_after_alert": "nothing"`):                                                       "Set Property After Alert: Order has no field nothing",
		base(`, "doctype_event": "Before Delete", "set_property_after_alert": "notified"`):                                                     "cannot be used on Before Delete",
		base(`, "doctype_event": "After Insert", "attach_document_print": 1, "custom_attachment": 1, "attach": "https://x.test/a.pdf"`):        "both set",
		base(`, "doctype_event": "After Insert", "custom_attachment": 1`):                                                                      "Custom Attachment needs a file",
		base(`, "doctype_event": "After Insert", "custom_attachment": 1, "attach": "/files/terms.pdf"`):                                        "must be an absolute http(s) URL",
		base(`, "notification_type": "Scheduler Event", "event_frequency": "Cron", "cron_format": "61 * * * *"`):                               "Cron Format",
		base(`, "notification_type": "Scheduler Event"`):                                                                                       "Event Frequency is required",
		`{"notification_name": "n", "reference_doctype": "Order", "template": "t", "doctype_event": "After Insert"}`:                           "Field Name (the phone field) is required",
		`{"notification_name": "n", "reference_doctype": "Nothing", "template": "t", "field_name": "mobile", "doctype_event": "After Insert"}`: "Reference Document Type Nothing: no such DocType",
		`{"notification_name": "n", "reference_doctype": "Order", "template": "t", "field_name": "phone", "doctype_event": "After Insert"}`:    "Field Name: Order has no field phone",
	} {
		_, err := b.frame.Insert(ctx, b.admin, b.org, notify.NotificationDoctype, obj(t, body))
		wantExc(t, err, msg)
	}
	// template and platform_account are Links: they must name documents.
	for body, msg := range map[string]string{
		`{"notification_name": "n", "reference_doctype": "Order", "template": "nope", "field_name": "mobile", "doctype_event": "After Insert"}`: "nope",
		base(`, "doctype_event": "After Insert", "platform_account": "Other"`):                                                                  "Other",
	} {
		_, err := b.frame.Insert(ctx, b.admin, b.org, notify.NotificationDoctype, obj(t, body))
		var e *docframe.Error
		if !errors.As(err, &e) || e.Exc != docframe.ExcLinkValidation || !strings.Contains(err.Error(), msg) {
			t.Errorf("error %v: want a LinkValidationError naming %s", err, msg)
		}
	}
	var n int64
	b.f.DB.Raw(`SELECT count(*) FROM docframe_documents WHERE organization_id = ? AND doctype = ?`, b.org, notify.NotificationDoctype).Scan(&n)
	if n != 0 {
		t.Errorf("%d refused notifications were stored", n)
	}
	// A Scheduler Event's mapping rows may name the keys of _data_list
	// objects, not fields.
	b.notification(t, `{"notification_name": "ok", "notification_type": "Scheduler Event", "reference_doctype": "Order",
		"event_frequency": "Cron", "cron_format": "*/5 * * * *", "template": "t", "fields": [{"field_name": "whatever"}],
		"condition": "doc._data_list = []"}`)
}

func TestOtherOrganizationsDocumentsDoNotFire(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, onInsert)
	other := b.f.Org().ID
	b.orgTypes(t, other)
	if _, err := b.frame.Insert(context.Background(), b.admin, other, "Order",
		obj(t, `{"customer": "Eve", "mobile": "+15550009999", "amount": 999}`)); err != nil {
		t.Fatal(err)
	}
	b.drain(t)
	if len(b.sender.all()) != 0 {
		t.Fatalf("another organization's order fired this one's notification: %+v", b.sender.all())
	}
}

// Attach Document Print: the send carries a signed link to a PDF of the
// document as it was at the event.
func TestAttachDocumentPrint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, `{"notification_name": "with print", "reference_doctype": "Order", "doctype_event": "After Insert",
		"template": "order_received", "field_name": "mobile", "attach_document_print": 1}`)
	name := b.order(t, `{"customer": "Ada (VIP)", "mobile": "+15550001111", "amount": 12.5}`)
	b.drain(t)
	sent := b.sender.all()
	if len(sent) != 1 || sent[0].Attachment == nil {
		t.Fatalf("sent %+v", sent)
	}
	a := sent[0].Attachment
	if a.Filename != name+".pdf" || !strings.HasPrefix(a.URL, "http://wharf.test/api/files/orgs/"+b.org.String()+"/prints/") ||
		!strings.Contains(a.URL, "signature=") {
		t.Fatalf("attachment %+v", a)
	}
	files, _ := filepath.Glob(filepath.Join(b.filesDir, "orgs", b.org.String(), "prints", "*.pdf"))
	if len(files) != 1 {
		t.Fatalf("stored prints %v", files)
	}
	pdf, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4")) || !bytes.Contains(pdf, []byte(`(Customer: Ada \(VIP\))`)) ||
		!bytes.Contains(pdf, []byte("(Amount: 12.5)")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatalf("print:\n%s", pdf)
	}
}

// A guarded secret (a Platform Account's verify token) reaches no
// notification: it cannot be a parameter, the phone or the button field,
// and conditions do not see it (nor does the ledger's snapshot).
func TestSecretsReachNoNotification(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	for _, extra := range []string{`"fields": [{"field_name": "customer"}, {"field_name": "secret_code"}]`,
		`"fields": [{"field_name": "customer"}], "button_fields": "secret_code"`} {
		_, err := b.frame.Insert(ctx, b.admin, b.org, notify.NotificationDoctype, obj(t, `{"notification_name": "n",
			"reference_doctype": "Order", "template": "t", "field_name": "mobile", "doctype_event": "After Insert", `+extra+`}`))
		wantExc(t, err, "field secret_code of Order is a secret")
	}
	_, err := b.frame.Insert(ctx, b.admin, b.org, notify.NotificationDoctype, obj(t, `{"notification_name": "n",
		"reference_doctype": "Order", "template": "t", "field_name": "secret_code", "doctype_event": "After Insert"}`))
	wantExc(t, err, "Field Name: field secret_code of Order is a secret")
	b.notification(t, `{"notification_name": "blind", "reference_doctype": "Order", "template": "t", "field_name": "mobile",
		"doctype_event": "After Insert", "condition": "doc.get('secret_code') == None", "fields": [{"field_name": "customer"}]}`)
	b.order(t, `{"customer": "Ada", "mobile": "+15550001111", "secret_code": "s3cr3t-code"}`)
	var snap string
	b.f.DB.Raw(`SELECT snapshot::text FROM wharfnotify_sends WHERE organization_id = ?`, b.org).Scan(&snap)
	if snap == "" || strings.Contains(snap, "s3cr3t-code") || strings.Contains(snap, "secret_code") {
		t.Fatalf("snapshot %s", snap)
	}
	b.drain(t)
	if sent := b.sender.all(); len(sent) != 1 || sent[0].Parameters[0] != "Ada" {
		t.Fatalf("sent %+v: the condition saw the secret", sent)
	}
}

type perms []string

func (p perms) Can(key string) bool { return slices.Contains(p, key) }

// A notification sends its reference DocType's data to numbers of its
// author's choosing: the author needs the right to create notifications
// (campaigns:create) and to read that DocType. Nothing is stored otherwise.
func TestNotificationAuthorMustReadItsDocType(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	body := `{"notification_name": "n", "notification_type": "Scheduler Event", "reference_doctype": "Order", "event_frequency": "All",
		"template": "t", "condition": "doc._data_list = [{'phone': '+15550009999', 'c': doc.customer}]", "fields": [{"field_name": "c"}]}`
	agent := docframe.Actor{Email: "agent@example.test", Role: "Agent", Perms: perms{"orders:read"}}
	_, err := b.frame.Insert(ctx, agent, b.org, notify.NotificationDoctype, obj(t, body))
	if !apperr.Is(err, apperr.Forbidden) || !strings.Contains(err.Error(), "create on Platform Notification for role Agent (needs the permission campaigns:create)") {
		t.Fatalf("an agent creates a notification: %v", err)
	}
	blind := docframe.Actor{Email: "c@example.test", Role: "Campaigner", Perms: perms{"campaigns:read", "campaigns:create"}}
	_, err = b.frame.Insert(ctx, blind, b.org, notify.NotificationDoctype, obj(t, body))
	if !apperr.Is(err, apperr.Forbidden) || !strings.Contains(err.Error(), "read on Order for role Campaigner (needs the permission orders:read)") {
		t.Fatalf("a campaigner who may not read orders: %v", err)
	}
	var n int64
	b.f.DB.Raw(`SELECT count(*) FROM docframe_documents WHERE organization_id = ? AND doctype = ?`, b.org, notify.NotificationDoctype).Scan(&n)
	if n != 0 {
		t.Fatalf("%d refused notifications stored", n)
	}
	reader := docframe.Actor{Email: "r@example.test", Role: "Campaigner", Perms: perms{"campaigns:read", "campaigns:create", "orders:read"}}
	if _, err := b.frame.Insert(ctx, reader, b.org, notify.NotificationDoctype, obj(t, body)); err != nil {
		t.Fatalf("a campaigner who reads orders: %v", err)
	}
}

// TestPrintOfADataListObjectWithAnEmptyKey: a scheduled run's object may
// have any keys, an empty one too: its print leaves that key out (it has
// no name to label) and the message goes, where the run used to panic.
func TestPrintOfADataListObjectWithAnEmptyKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.notification(t, `{"notification_name": "listed", "notification_type": "Scheduler Event", "reference_doctype": "Order",
		"event_frequency": "All", "template": "reminder", "attach_document_print": 1,
		"condition": "doc._data_list = [{\"phone\": doc.mobile, \"\": \"nameless\", \"note\": \"hello\"}]"}`)
	b.order(t, `{"customer": "Ada", "mobile": "+15550001111"}`)
	if err := b.svc.Run(context.Background(), b.org, "listed", b.clock.now()); err != nil {
		t.Fatal(err)
	}
	b.drain(t)
	sent := b.sender.all()
	if len(sent) != 1 || sent[0].Attachment == nil {
		t.Fatalf("sent %+v", sent)
	}
	files, _ := filepath.Glob(filepath.Join(b.filesDir, "orgs", b.org.String(), "prints", "*.pdf"))
	if len(files) != 1 {
		t.Fatalf("stored prints %v", files)
	}
	pdf, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(pdf, []byte("(Note: hello)")) || !bytes.Contains(pdf, []byte("(Phone: +15550001111)")) || bytes.Contains(pdf, []byte("nameless")) {
		t.Fatalf("print:\n%s", pdf)
	}
}
