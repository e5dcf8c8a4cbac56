package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/storage"
	"wharf/internal/integration/docframe"
	"wharf/internal/integration/notify"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
)

// recordingSender stands in for the integration's base (internal/integration/messages,
// Platform Message), which is built apart: this package cannot run a real
// send without it. It records what it is asked to send.
type recordingSender struct {
	mu   sync.Mutex
	sent []notify.TemplateSend
	fail error
	n    atomic.Int64
}

func (r *recordingSender) SendTemplate(_ context.Context, _ uuid.UUID, m notify.TemplateSend) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return "", r.fail
	}
	r.sent = append(r.sent, m)
	return "MSG-" + string(rune('A'+r.n.Add(1)-1)), nil
}

func (r *recordingSender) all() []notify.TemplateSend {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notify.TemplateSend{}, r.sent...)
}

type bundle struct {
	svc    *notify.Service
	frame  *docframe.Service
	f      *testfactory.Factory
	q      *testenv.Queue
	org    uuid.UUID
	sender *recordingSender
	// filesDir holds the stored prints.
	filesDir string
	admin    docframe.Actor
	clock    *clock
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// setup builds the service as the lead wires it: the service first (with
// its cache in the test's Redis), the framework with it as hook and event
// sink, then Attach; an organization with the notification DocTypes and a
// submittable user DocType, Order.
func setup(t *testing.T, with ...func(*notify.Deps)) *bundle {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	b := &bundle{f: f, q: testenv.NewQueue(t), org: f.Org().ID, sender: &recordingSender{},
		admin: docframe.Actor{UserID: uuid.New(), Email: "admin@example.test", Role: "Admin"},
		clock: &clock{t: time.Now().UTC()}}
	b.filesDir = t.TempDir()
	files, err := storage.NewLocal(b.filesDir, storage.WithSigning([]byte(strings.Repeat("k", 32)), "http://wharf.test"))
	if err != nil {
		t.Fatal(err)
	}
	// The lookup of an event's notifications is cached, as in the app.
	deps := notify.Deps{DB: f.DB, Enqueuer: b.q.Enqueuer, Sender: b.sender, Files: files, Log: testenv.Quiet(), Now: b.clock.now,
		Redis: testenv.Redis(t, testenv.RedisURL(t)), CacheMaxAge: time.Hour}
	for _, w := range with {
		w(&deps)
	}
	b.svc = notify.New(deps)
	t.Cleanup(b.svc.Close)
	// Notifications follow the core's campaign permissions; Order is
	// guarded too (read: orders:read), its secret_code a secret, as a
	// Platform Account's verify token is.
	frame, err := docframe.New(f.DB, f.Box, docframe.Options{Hooks: []docframe.Hook{b.svc}, Events: b.svc, Log: testenv.Quiet(),
		Guards: append(notify.Guards(), docframe.Guard{Doctype: "Order", Rights: map[string]string{docframe.PermRead: "orders:read"},
			Secrets: []string{"secret_code"}})})
	if err != nil {
		t.Fatal(err)
	}
	b.frame = frame
	b.orgTypes(t, b.org)
	return b
}

// linkTargets are the Platform Template and Platform Account documents the
// tests' notifications link to.
var linkTargets = map[string][]string{
	notify.PlatformTemplate: {"order_received", "order_saved", "order_tracked", "t", "reminder", "hourly", "due_soon", "overdue"},
	notify.PlatformAccount:  {"Main"},
}

func (b *bundle) orgTypes(t *testing.T, org uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	// Stand-ins for the integration base's DocTypes (internal/integration/messages,
	// built apart), which a notification's template and platform_account
	// link to: they must exist before the notification DocTypes.
	for doctype, names := range linkTargets {
		if _, err := b.frame.SaveDocType(ctx, b.admin, org, "", obj(t, `{"name": "`+doctype+`", "autoname": "field:title",
			"fields": [{"fieldname": "title", "fieldtype": "Data", "reqd": 1}]}`), true); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if _, err := b.frame.Insert(ctx, b.admin, org, doctype, map[string]any{"title": n}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.svc.EnsureDocTypes(ctx, org); err != nil {
		t.Fatal(err)
	}
	if _, err := b.frame.SaveDocType(ctx, b.admin, org, "", obj(t, `{"name": "Order", "is_submittable": 1,
		"fields": [{"fieldname": "customer", "fieldtype": "Data", "reqd": 1},
		  {"fieldname": "mobile", "fieldtype": "Data"},
		  {"fieldname": "amount", "fieldtype": "Float"},
		  {"fieldname": "status", "fieldtype": "Select", "options": "Open\nClosed", "default": "Open"},
		  {"fieldname": "due", "fieldtype": "Date"},
		  {"fieldname": "notified", "fieldtype": "Check"},
		  {"fieldname": "saves", "fieldtype": "Int"},
		  {"fieldname": "track", "fieldtype": "Data"},
		  {"fieldname": "secret_code", "fieldtype": "Data"}]}`), true); err != nil {
		t.Fatal(err)
	}
}

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

func (b *bundle) notification(t *testing.T, body string) map[string]any {
	t.Helper()
	n, err := b.frame.Insert(context.Background(), b.admin, b.org, notify.NotificationDoctype, obj(t, body))
	if err != nil {
		t.Fatalf("insert notification: %v", err)
	}
	return n
}

func (b *bundle) order(t *testing.T, body string) string {
	t.Helper()
	d, err := b.frame.Insert(context.Background(), b.admin, b.org, "Order", obj(t, body))
	if err != nil {
		t.Fatalf("insert order: %v", err)
	}
	return d["name"].(string)
}

// drain is the worker: it runs the queued notification tasks (and those
// they enqueue) with the handlers of the service's Jobs (jobs.go), until the
// queue is empty, and answers how many ran.
func (b *bundle) drain(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	ran := 0
	for round := 0; round < 20; round++ {
		tasks := b.q.Tasks(t)
		if len(tasks) == 0 {
			return ran
		}
		for _, ti := range tasks {
			var err error
			switch ti.Type {
			case jobs.TypeNotifySend:
				var p jobs.NotifySend
				_ = json.Unmarshal(ti.Payload, &p)
				err = b.svc.Deliver(ctx, p.OrganizationID, p.SendID)
			case jobs.TypeNotifyRun:
				var p jobs.NotifyRun
				_ = json.Unmarshal(ti.Payload, &p)
				err = b.svc.Run(ctx, p.OrganizationID, p.Notification, p.Tick)
			default:
				t.Fatalf("unexpected task %s", ti.Type)
			}
			if err != nil {
				t.Fatalf("%s: %v", ti.Type, err)
			}
			if err := b.q.Inspector.DeleteTask(ti.Queue, ti.ID); err != nil {
				t.Fatal(err)
			}
			ran++
		}
	}
	t.Fatal("the queue does not drain")
	return ran
}

type ledgerRow struct {
	ID              uuid.UUID
	Notification    string
	ReferenceName   string
	Event           string
	Status          string
	MessageName     string
	Error           string
	PropertyPending bool
}

func (b *bundle) ledger(t *testing.T) []ledgerRow {
	t.Helper()
	var rows []ledgerRow
	if err := b.f.DB.Raw(`SELECT id, notification, reference_name, event, status, message_name, error, property_pending
		FROM wharfnotify_sends WHERE organization_id = ? ORDER BY created_at, dedupe_key`, b.org).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

func (b *bundle) get(t *testing.T, doctype, name string) map[string]any {
	t.Helper()
	d, err := b.frame.Get(context.Background(), b.admin, b.org, doctype, name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wantExc(t *testing.T, err error, msg string) {
	t.Helper()
	var e *docframe.Error
	if err == nil || !errors.As(err, &e) || e.Exc != "ValidationError" || !strings.Contains(err.Error(), msg) {
		t.Errorf("error %v: want a ValidationError containing %q", err, msg)
	}
}
