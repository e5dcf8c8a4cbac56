package messages_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/inbound"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/statuses"
	"wharf/internal/integration/docframe"
	"wharf/internal/integration/messages"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
	"wharf/internal/pflows"
	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// recorder is a test Hook on Platform Messages and an EventSink: it
// records after_insert calls (with whether the row was visible in the
// hook's transaction) and committed events.
type recorder struct {
	mu      sync.Mutex
	inserts []string
	events  []string
	next    *messages.Service
}

func (*recorder) Doctypes() []string { return []string{messages.DoctypeMessage} }

func (r *recorder) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, doc *docframe.Doc) error {
	if ev == docframe.AfterInsert {
		var n int64
		tx.Raw(`SELECT count(*) FROM docframe_documents WHERE name = ?`, doc.Name).Scan(&n)
		r.mu.Lock()
		defer r.mu.Unlock()
		if n == 1 {
			r.inserts = append(r.inserts, doc.Name)
		}
	}
	return nil
}

// Bind passes the framework on to the integration (docframe.Binder).
func (r *recorder) Bind(f *docframe.Service) { r.next.Bind(f) }

func (r *recorder) DocumentEvent(ctx context.Context, e docframe.DocEvent) {
	r.mu.Lock()
	r.events = append(r.events, e.Event+" "+e.Doc.Doctype+" "+e.Doc.Name)
	r.mu.Unlock()
	r.next.DocumentEvent(ctx, e)
}

type env struct {
	f     *testfactory.Factory
	p     *testfactory.Provider
	q     *testenv.Queue
	w     *messages.Service
	msg   *messaging.Service
	wh    *webhooks.Service
	frame *docframe.Service
	accts *accounts.Service
	rec   *recorder
	org   *testfactory.Org
	admin docframe.Actor
}

func setup(t *testing.T) *env {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	q := testenv.NewQueue(t)
	policy := safehttp.Policy{AllowPrivate: true}
	wh := webhooks.NewService(f.DB, f.Box, q.Enqueuer, policy, nil, testenv.Quiet())
	settings := orgsettings.NewService(f.DB, f.Box, nil, nil)
	accts := accounts.NewService(f.DB, f.Box, p.Client, settings, q.Enqueuer, testenv.Quiet())
	cs := contacts.NewService(f.DB, wh, nil, nil)
	tm := templates.NewService(f.DB, accts, p.Client, q.Enqueuer, testenv.Quiet())
	msg := messaging.NewService(messaging.Deps{DB: f.DB, Accounts: accts, Contacts: cs, Templates: tm, Webhooks: wh, Provider: p.Client,
		Enqueuer: q.Enqueuer, Policy: policy, Log: testenv.Quiet()})
	w := messages.New(messages.Deps{DB: f.DB, Accounts: accts, Contacts: cs, Templates: tm, Messaging: msg,
		Flows: pflows.NewService(f.DB, accts, p.Client), Settings: settings, Webhooks: wh, Enqueuer: q.Enqueuer, ProviderURL: p.URL,
		Log: testenv.Quiet()})
	rec := &recorder{next: w}
	frame, err := docframe.New(f.DB, f.Box, docframe.Options{Hooks: append(w.Hooks(), rec), Methods: w.Methods(), BuiltIn: w.BuiltIn,
		Events: rec, Log: testenv.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	org := f.Org()
	return &env{f: f, p: p, q: q, w: w, msg: msg, wh: wh, frame: frame, accts: accts, rec: rec, org: org,
		admin: docframe.Actor{Email: "admin@example.com", Role: docframe.RoleAdmin}}
}

func (e *env) account(t *testing.T, name string, extra map[string]any) map[string]any {
	t.Helper()
	in := map[string]any{"account_name": name, "token": testfactory.Token, "phone_id": e.p.PhoneNumberID(), "business_id": e.p.WABA.ID,
		"app_id": "1", "webhook_verify_token": "verify-" + name}
	for k, v := range extra {
		in[k] = v
	}
	doc, err := e.frame.Insert(context.Background(), e.admin, e.org.ID, messages.DoctypeAccount, in)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestAccountMirror(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	// A refused document creates no core account.
	_, err := e.frame.Insert(ctx, e.admin, e.org.ID, messages.DoctypeAccount, map[string]any{"account_name": "Broken",
		"token": "t", "phone_id": "abc", "business_id": "1", "app_id": "1", "webhook_verify_token": "v"})
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("non-numeric phone_id: %v", err)
	}
	if n := e.f.Count("platform_accounts", "organization_id = ?", e.org.ID); n != 0 {
		t.Fatalf("%d core accounts after a refused document", n)
	}
	e.account(t, "Main", map[string]any{"app_secret": "s3cret"})
	var rows []models.PlatformAccount
	e.f.DB.Find(&rows, "organization_id = ?", e.org.ID)
	if len(rows) != 1 || rows[0].Name != "Main" || rows[0].PhoneNumberID != e.p.PhoneNumberID() || rows[0].WebhookVerifyToken != "verify-Main" {
		t.Fatalf("core accounts %+v", rows)
	}
	a, err := e.accts.Get(ctx, e.org.ID, rows[0].ID)
	if err != nil || a.AccessToken != testfactory.Token {
		t.Fatalf("core token: %v %v", a, err)
	}
	if got := e.q.TaskTypes(t)[jobs.TypeAccountRefresh]; got != 1 {
		t.Errorf("%d account:refresh tasks after the commit, want 1", got)
	}
	settings := orgsettings.NewService(e.f.DB, e.f.Box, nil, nil)
	if s, err := settings.ProviderAppSecret(ctx, e.org.ID); err != nil || s != "s3cret" {
		t.Errorf("organization app secret %q %v", s, err)
	}
	// A new token reaches the core account; ids cannot change.
	if _, err := e.frame.Update(ctx, e.admin, e.org.ID, messages.DoctypeAccount, "Main", map[string]any{"token": "new-token"}); err != nil {
		t.Fatal(err)
	}
	if a, _ := e.accts.Get(ctx, e.org.ID, rows[0].ID); a.AccessToken != "new-token" {
		t.Errorf("token after the save: %q", a.AccessToken)
	}
	_, err = e.frame.Update(ctx, e.admin, e.org.ID, messages.DoctypeAccount, "Main", map[string]any{"phone_id": "999"})
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("phone_id change: %v", err)
	}
	// Deleting the document deletes the core account.
	if err := e.frame.Delete(ctx, e.admin, e.org.ID, messages.DoctypeAccount, "Main"); err != nil {
		t.Fatal(err)
	}
	if n := e.f.Count("platform_accounts", "organization_id = ?", e.org.ID); n != 0 {
		t.Fatalf("%d core accounts after the delete", n)
	}
	// AccountFor: another organization's account does not exist.
	e.account(t, "Again", nil)
	if _, err := e.w.AccountFor(ctx, e.org.ID, "Again"); err != nil {
		t.Fatal(err)
	}
	other := e.f.Org()
	if _, err := e.w.AccountFor(ctx, other.ID, "Again"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("AccountFor in another organization: %v", err)
	}
}

func incoming(t *testing.T, raw string) platform.IncomingMessage {
	var m platform.IncomingMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestIncomingInTransaction: an incoming message's document and its
// after_insert hook commit or roll back with the consumer's transaction,
// and After Insert is published only after the commit.
func TestIncomingInTransaction(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	e.account(t, "Main", nil)
	var row models.PlatformAccount
	e.f.DB.Take(&row, "organization_id = ?", e.org.ID)
	a, _ := e.accts.Get(ctx, e.org.ID, row.ID)
	in := &inbound.Incoming{Account: a, Message: incoming(t, `{"from":"15550001111","id":"wamid.in1","type":"text","text":{"body":"hello"}}`)}

	boom := errors.New("rolled back")
	err := e.f.DB.Transaction(func(tx *gorm.DB) error {
		if _, err := e.w.ConsumeMessage(ctx, tx, in); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || e.f.Count("docframe_documents", "doctype = ?", messages.DoctypeMessage) != 0 || len(e.rec.events) != 1 {
		t.Fatalf("rolled back: %v, events %v", err, e.rec.events)
	}
	var res inbound.MessageResult
	err = e.f.DB.Transaction(func(tx *gorm.DB) error {
		var err error
		res, err = e.w.ConsumeMessage(ctx, tx, in)
		return err
	})
	if err != nil || len(e.rec.inserts) != 2 || len(e.rec.events) != 1 {
		t.Fatalf("committed: %v, inserts %v, events %v", err, e.rec.inserts, e.rec.events)
	}
	res.AfterCommit(ctx)
	if len(e.rec.events) != 2 || e.rec.events[1] != "After Insert Platform Message "+e.rec.inserts[1] {
		t.Fatalf("events %v", e.rec.events)
	}
	doc, err := e.frame.GetDoc(ctx, nil, e.org.ID, messages.DoctypeMessage, e.rec.inserts[1])
	if err != nil || doc.Get("message") != "hello" || doc.Get("type") != "Incoming" || doc.Get("message_type") != "received" {
		t.Fatalf("incoming doc %+v %v", doc, err)
	}
	// An account no Platform Account mirrors: nothing is copied.
	plain := e.f.Account(e.org.ID)
	pa, _ := e.accts.Get(ctx, e.org.ID, plain.ID)
	e.f.DB.Transaction(func(tx *gorm.DB) error {
		_, err := e.w.ConsumeMessage(ctx, tx, &inbound.Incoming{Account: pa, Message: in.Message})
		return err
	})
	if n := e.f.Count("docframe_documents", "doctype = ?", messages.DoctypeMessage); n != 1 {
		t.Fatalf("%d message docs, want 1", n)
	}
}

// project dispatches the organization's undispatched message.changed
// events to the projector, as the outbox's dispatch task does, and
// answers how many there were.
func (e *env) project(t *testing.T) int {
	t.Helper()
	var ids []uuid.UUID
	e.f.DB.Raw(`SELECT id FROM events WHERE organization_id = ? AND event = ? AND dispatched_at IS NULL ORDER BY created_at`,
		e.org.ID, webhooks.EventMessageChanged).Scan(&ids)
	for _, id := range ids {
		if err := e.wh.Dispatch(context.Background(), e.org.ID, id, e.w); err != nil {
			t.Fatal(err)
		}
	}
	return len(ids)
}

// TestStatusesMirror: every status of a batch that changes a Platform
// Message's core message reaches the document through the projector,
// forward only: messaging applies the batch and records message.changed
// for the projected messages it changed, the projector applies the core
// row. An unknown id is passed on; the integration's own status consumer
// leaves projected documents alone.
func TestStatusesMirror(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	e.account(t, "Main", map[string]any{"is_default_outgoing": 1})
	send := func(to string) *docframe.Doc {
		d, err := e.frame.InsertDoc(ctx, e.org.ID, "Administrator", messages.DoctypeMessage, map[string]any{"to": to, "message": "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if d.Get("status") != messages.StatusQueued || d.Get("platform_account") != "Main" {
			t.Fatalf("queued doc %+v", d.Fields)
		}
		return d
	}
	d1, d2, d3 := send("+15550001111"), send("+15550002222"), send("+15550005555")
	if got := e.q.TaskTypes(t)[jobs.TypeMessageSend]; got != 3 {
		t.Fatalf("%d message:send tasks, want 3", got)
	}
	core := func(d *docframe.Doc) string { return d.Get("core_message_id").(string) }
	var pending int64
	e.f.DB.Raw(`SELECT count(*) FROM messages WHERE organization_id = ? AND status = 'pending' AND projected AND id::text IN ?`, e.org.ID,
		[]string{core(d1), core(d2), core(d3)}).Scan(&pending)
	if pending != 3 {
		t.Fatalf("%d pending projected core messages, want 3", pending)
	}
	var acc models.PlatformAccount
	e.f.DB.Take(&acc, "organization_id = ?", e.org.ID)
	// apply applies a batch as inbound does (messaging: the integration
	// takes no statuses of its own), then dispatches the events it recorded.
	apply := func(all []*statuses.Outcome, events int) []*statuses.Outcome {
		t.Helper()
		var unmatched []*statuses.Outcome
		err := e.f.DB.Transaction(func(tx *gorm.DB) error {
			b := inbound.StatusBatch{OrganizationID: e.org.ID, AccountID: acc.ID, Outcomes: all, All: all}
			res, err := e.msg.ApplyStatuses(ctx, tx, b)
			if err != nil {
				return err
			}
			unmatched = res.Unmatched
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := e.project(t); n != events {
			t.Errorf("%d message.changed events, want %d", n, events)
		}
		return unmatched
	}
	check := func(d *docframe.Doc, id, status, errText string) {
		t.Helper()
		got, _ := e.frame.GetDoc(ctx, nil, e.org.ID, messages.DoctypeMessage, d.Name)
		if got.Get("message_id") != id || got.Get("status") != status || str(got.Get("error")) != errText {
			t.Errorf("%s: message_id %v status %v error %v, want %s %s %q", d.Name, got.Get("message_id"), got.Get("status"),
				got.Get("error"), id, status, errText)
		}
	}
	// The sends' answers were lost: the statuses find them by callback.
	unmatched := apply([]*statuses.Outcome{
		{PlatformID: "wamid.1", Final: "delivered", Callback: core(d1)},
		{PlatformID: "wamid.unknown", Final: "read"},
		{PlatformID: "wamid.2", Final: "failed", Callback: core(d2), ErrorTitle: "Undeliverable"},
	}, 2)
	if len(unmatched) != 1 || unmatched[0].PlatformID != "wamid.unknown" {
		t.Errorf("unmatched %v, want wamid.unknown", unmatched)
	}
	check(d1, "wamid.1", "delivered", "")
	check(d2, "wamid.2", "failed", "Undeliverable")
	// Backwards is ignored (no change, no event); a late read moves on.
	apply([]*statuses.Outcome{{PlatformID: "wamid.1", Final: "sent"}, {PlatformID: "wamid.2", Final: "delivered"}}, 0)
	check(d1, "wamid.1", "delivered", "")
	check(d2, "wamid.2", "failed", "Undeliverable")
	apply([]*statuses.Outcome{{PlatformID: "wamid.1", Final: "read"}}, 1)
	check(d1, "wamid.1", "read", "")
	// A send the sweep gave up on (failed, no provider id) whose status
	// comes late: the core message gets the provider's id, and so does the
	// document, though the status stays failed.
	if err := e.f.DB.Exec(`UPDATE messages SET status = 'failed', error_title = 'send outcome unknown' WHERE id = ?`, core(d3)).Error; err != nil {
		t.Fatal(err)
	}
	apply([]*statuses.Outcome{{PlatformID: "wamid.3", Final: "delivered", Callback: core(d3)}}, 1)
	check(d3, "wamid.3", "failed", "send outcome unknown")
	// A template that is not approved: refused, nothing stored.
	before := e.f.Count("messages", "organization_id = ?", e.org.ID)
	e.f.Template(acc, "Hi {{1}}", func(m *models.Template) { m.Name, m.Status = "pending_one", models.TemplatePending })
	tdoc, err := e.frame.InsertDoc(ctx, e.org.ID, "Administrator", messages.DoctypeTemplate, map[string]any{"template_name": "pending_one",
		"template": "Hi {{1}}", "template_id": "123", "platform_account": "Main"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.w.SendTemplate(ctx, e.org.ID, messages.SendTemplate{To: "+15550003333", Template: tdoc.Name, Parameters: []string{"x"}}); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("send of a PENDING template: %v", err)
	}
	if after := e.f.Count("messages", "organization_id = ?", e.org.ID); after != before {
		t.Fatalf("a refused send stored a message (%d → %d)", before, after)
	}
}

// TestSendMessageAnswersTheSend: send_message answers sent once the
// provider accepted the send, also when the statuses went further (read)
// before its wait ended; the document holds the furthest status.
func TestSendMessageAnswersTheSend(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	e.account(t, "Main", map[string]any{"is_default_outgoing": 1})
	type answer struct {
		out any
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := e.frame.CallMethod(ctx, "wharf.api.send_message", "POST", &docframe.Call{Actor: e.admin, OrganizationID: e.org.ID,
			Args: map[string]any{"to": "+15550004444", "message": "hi"}})
		done <- answer{out, err}
	}()
	// The queued core message; then, at once, accepted and already read
	// (the worker sent it and the provider's statuses came in quickly).
	var coreID string
	deadline := time.Now().Add(5 * time.Second)
	for coreID == "" && time.Now().Before(deadline) {
		e.f.DB.Raw(`SELECT id FROM messages WHERE organization_id = ? AND status = 'pending'`, e.org.ID).Scan(&coreID)
		time.Sleep(5 * time.Millisecond)
	}
	if coreID == "" {
		t.Fatal("no queued core message")
	}
	if err := e.f.DB.Exec(`UPDATE messages SET status = 'read', platform_message_id = 'wamid.fast' WHERE id = ?`, coreID).Error; err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatal(a.err)
	}
	got := a.out.(map[string]any)
	if got["status"] != messages.StatusSent || got["message_id"] != "wamid.fast" {
		t.Fatalf("send_message answered %v, want sent with wamid.fast", got)
	}
	doc, err := e.frame.GetDoc(ctx, nil, e.org.ID, messages.DoctypeMessage, got["name"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Get("status") != messages.StatusRead || doc.Get("message_id") != "wamid.fast" {
		t.Fatalf("document %v, want read with wamid.fast", doc.Fields)
	}
}

// str is a document field's text ("" when absent).
func str(v any) string {
	s, _ := v.(string)
	return s
}
