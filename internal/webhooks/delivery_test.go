package webhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
)

// receiver records the requests it gets and answers status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []*http.Request
	bodies [][]byte
	status int
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got, r.bodies = append(r.got, req), append(r.bodies, b)
		r.mu.Unlock()
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() ([]*http.Request, [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request{}, r.got...), append([][]byte{}, r.bodies...)
}

// Outbound delivery: to every active webhook of the organization that
// subscribes to the event, signed, at least once, with retries about 2 s
// and 4 s later, and dropped after the third attempt.
func TestDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f     *testfactory.Factory
		org   *testfactory.Org
		queue *testenv.Queue
	}
	setup := func(t *testing.T) (*webhooks.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, q := newService(t, f, true)
		return svc, &testBundle{f: f, org: f.Org(), queue: q}
	}
	hook := func(t *testing.T, svc *webhooks.Service, orgID uuid.UUID, url, secret string, active bool, events ...string) uuid.UUID {
		t.Helper()
		w, err := svc.Create(ctx, orgID, webhooks.Input{Name: ptr("h"), URL: ptr(url), Events: &events, Secret: ptr(secret),
			IsActive: ptr(active), Headers: &map[string]string{"X-Tenant": "acme"}})
		if err != nil {
			t.Fatal(err)
		}
		return w.ID
	}
	emit := func(t *testing.T, svc *webhooks.Service, bundle *testBundle, orgID uuid.UUID, event string) uuid.UUID {
		t.Helper()
		var id uuid.UUID
		err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
			var err error
			id, err = svc.Emit(ctx, tx, orgID, event, map[string]string{"contact_id": "c1"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}

	t.Run("AnEventReachesEverySubscribedActiveWebhookSigned", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		signed, plain, inactive, other, foreign := newReceiver(t, 200), newReceiver(t, 204), newReceiver(t, 200), newReceiver(t, 200), newReceiver(t, 200)
		hook(t, svc, bundle.org.ID, signed.URL, "s3cret", true, "contact.created")
		hook(t, svc, bundle.org.ID, plain.URL, "", true, "message.incoming", "contact.created")
		hook(t, svc, bundle.org.ID, inactive.URL, "", false, "contact.created")
		hook(t, svc, bundle.org.ID, other.URL, "", true, "message.incoming")
		hook(t, svc, bundle.f.Org().ID, foreign.URL, "", true, "contact.created")
		id := emit(t, svc, bundle, bundle.org.ID, "contact.created")
		if err := svc.Dispatch(ctx, bundle.org.ID, id); err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]*receiver{"inactive": inactive, "other event": other, "other organization": foreign} {
			if got, _ := r.requests(); len(got) != 0 {
				t.Errorf("%s webhook got %d deliveries", name, len(got))
			}
		}
		reqs, bodies := signed.requests()
		if len(reqs) != 1 {
			t.Fatalf("signed webhook got %d deliveries", len(reqs))
		}
		h := reqs[0].Header
		if h.Get(webhooks.SignatureHeader) != webhooks.Signature("s3cret", bodies[0]) || h.Get("X-Webhook-ID") != id.String() ||
			h.Get("X-Webhook-Event") != "contact.created" || h.Get("User-Agent") != webhooks.UserAgent || h.Get("X-Tenant") != "acme" {
			t.Errorf("headers %v", h)
		}
		var body struct {
			Event     string            `json:"event"`
			Timestamp time.Time         `json:"timestamp"`
			Data      map[string]string `json:"data"`
		}
		if err := json.Unmarshal(bodies[0], &body); err != nil || body.Event != "contact.created" || body.Data["contact_id"] != "c1" ||
			body.Timestamp.IsZero() {
			t.Errorf("body %s: %v", bodies[0], err)
		}
		if reqs, _ := plain.requests(); len(reqs) != 1 || reqs[0].Header.Get(webhooks.SignatureHeader) != "" {
			t.Errorf("unsigned webhook got %d deliveries (%v)", len(reqs), reqs)
		}
		// A dispatched event is not delivered again.
		if err := svc.Dispatch(ctx, bundle.org.ID, id); err != nil {
			t.Fatal(err)
		}
		if reqs, _ := signed.requests(); len(reqs) != 1 {
			t.Errorf("a second dispatch delivered again (%d deliveries)", len(reqs))
		}
		if bundle.f.Count("webhook_deliveries", "success") != 2 || bundle.f.Count("events", "dispatched_at IS NOT NULL") != 1 {
			t.Error("want two successful deliveries logged and the event dispatched")
		}
	})

	t.Run("AFailingEndpointGetsThreeAttemptsThenTheEventIsDropped", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		down := newReceiver(t, 500)
		wid := hook(t, svc, bundle.org.ID, down.URL, "", true, "contact.created")
		id := emit(t, svc, bundle, bundle.org.ID, "contact.created")
		start := time.Now()
		if err := svc.Dispatch(ctx, bundle.org.ID, id); err != nil {
			t.Fatal(err)
		}
		retry := func(attempt int) *jobs.WebhookDeliver {
			t.Helper()
			for _, ti := range bundle.queue.Tasks(t) {
				var p jobs.WebhookDeliver
				if ti.Type == jobs.TypeWebhookDeliver && json.Unmarshal(ti.Payload, &p) == nil && p.Attempt == attempt {
					if wait := ti.NextProcessAt.Sub(start); wait < time.Duration(1<<(attempt-1))*time.Second {
						t.Errorf("attempt %d scheduled %s after the first, want at least %d s", attempt, wait, 1<<(attempt-1))
					}
					return &p
				}
			}
			return nil
		}
		p := retry(2)
		if p == nil || p.WebhookID != wid || p.EventID != id {
			t.Fatalf("second attempt %+v, tasks %v", p, bundle.queue.TaskTypes(t))
		}
		if err := svc.Deliver(ctx, bundle.org.ID, wid, id, 2); err != nil {
			t.Fatal(err)
		}
		if retry(3) == nil {
			t.Fatalf("no third attempt scheduled: %v", bundle.queue.TaskTypes(t))
		}
		if err := svc.Deliver(ctx, bundle.org.ID, wid, id, 3); err != nil {
			t.Fatal(err)
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeWebhookDeliver] != 2 {
			t.Errorf("tasks %v: want no fourth attempt", got)
		}
		if reqs, _ := down.requests(); len(reqs) != 3 || bundle.f.Count("webhook_deliveries", "NOT success AND status_code = 500") != 3 {
			t.Errorf("%d attempts; want 3, each logged as failed", len(reqs))
		}
	})

	t.Run("RetriesSkipWebhooksDeletedOrDeactivatedMeanwhile", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		r := newReceiver(t, 200)
		paused := hook(t, svc, bundle.org.ID, r.URL, "", true, "contact.created")
		gone := hook(t, svc, bundle.org.ID, r.URL, "", true, "contact.created")
		id := emit(t, svc, bundle, bundle.org.ID, "contact.created")
		if _, err := svc.Update(ctx, bundle.org.ID, paused, webhooks.Input{IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if err := svc.Delete(ctx, bundle.org.ID, gone); err != nil {
			t.Fatal(err)
		}
		for _, w := range []uuid.UUID{paused, gone} {
			if err := svc.Deliver(ctx, bundle.org.ID, w, id, 2); err != nil {
				t.Fatal(err)
			}
		}
		// Another organization's retry task cannot deliver this one's event.
		if err := svc.Deliver(ctx, bundle.f.Org().ID, paused, id, 2); err != nil {
			t.Fatal(err)
		}
		if reqs, _ := r.requests(); len(reqs) != 0 {
			t.Errorf("%d deliveries", len(reqs))
		}
	})

	t.Run("TheLogKeepsWhatWasSentAndTheStartOfTheAnswer", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		long := "\x00" + strings.Repeat("é", 3000) // a NUL (PostgreSQL's text refuses it), then 6 KB of two-byte runes
		r := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(422)
			_, _ = io.WriteString(w, long)
		}))
		t.Cleanup(r.Close)
		wid := hook(t, svc, bundle.org.ID, r.URL, "", true, "contact.created")
		id := emit(t, svc, bundle, bundle.org.ID, "contact.created")
		if err := svc.Dispatch(ctx, bundle.org.ID, id); err != nil {
			t.Fatal(err)
		}
		log, err := svc.Deliveries(ctx, bundle.org.ID, wid, 10)
		if err != nil || len(log) != 1 {
			t.Fatalf("log %v: %v", log, err)
		}
		d := log[0]
		if !strings.Contains(d.RequestBody, `"event":"contact.created"`) || !strings.Contains(d.RequestBody, `"contact_id":"c1"`) {
			t.Errorf("request body %q", d.RequestBody)
		}
		if len(d.ResponseBody) > 4<<10 || !utf8.ValidString(d.ResponseBody) || !strings.HasPrefix(d.ResponseBody, "éé") || d.StatusCode != 422 {
			t.Errorf("response body of %d bytes (valid UTF-8: %v), status %d", len(d.ResponseBody), utf8.ValidString(d.ResponseBody), d.StatusCode)
		}
		if d.Redelivery {
			t.Error("a dispatch is logged as a redelivery")
		}
	})

	t.Run("ARedeliverySendsTheSameEventAgainOnceAndIsLogged", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		r := newReceiver(t, 500)
		wid := hook(t, svc, bundle.org.ID, r.URL, "s3cret", true, "contact.created")
		id := emit(t, svc, bundle, bundle.org.ID, "contact.created")
		if err := svc.Dispatch(ctx, bundle.org.ID, id); err != nil {
			t.Fatal(err)
		}
		first, _ := svc.Deliveries(ctx, bundle.org.ID, wid, 1)
		r.mu.Lock()
		r.status = 200
		r.mu.Unlock()
		tasks := bundle.queue.TaskTypes(t)[jobs.TypeWebhookDeliver]
		d, err := svc.Redeliver(ctx, bundle.org.ID, wid, first[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Success || !d.Redelivery || d.Attempt != 2 || d.EventID == nil || *d.EventID != id || d.ID == first[0].ID {
			t.Fatalf("redelivery logged as %+v", d)
		}
		reqs, bodies := r.requests()
		if len(reqs) != 2 || string(bodies[1]) != string(bodies[0]) || reqs[1].Header.Get("X-Webhook-ID") != id.String() ||
			reqs[1].Header.Get(webhooks.SignatureHeader) != webhooks.Signature("s3cret", bodies[1]) {
			t.Fatalf("%d requests; the redelivery is not the same signed event", len(reqs))
		}
		if got := bundle.queue.TaskTypes(t)[jobs.TypeWebhookDeliver]; got != tasks {
			t.Errorf("a redelivery scheduled retries: %d tasks, had %d", got, tasks)
		}
	})

	t.Run("RedeliveryRefusals", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		r := newReceiver(t, 500)
		wid := hook(t, svc, bundle.org.ID, r.URL, "", true, "contact.created")
		other := hook(t, svc, bundle.org.ID, r.URL, "", true, "contact.created")
		id := emit(t, svc, bundle, bundle.org.ID, "contact.created")
		if err := svc.Dispatch(ctx, bundle.org.ID, id); err != nil {
			t.Fatal(err)
		}
		log, _ := svc.Deliveries(ctx, bundle.org.ID, wid, 1)
		did := log[0].ID
		sent := func() int { reqs, _ := r.requests(); return len(reqs) }
		before := sent()
		// Another organization, or another webhook of this one, finds no such delivery.
		foreign := bundle.f.Org()
		if _, err := svc.Redeliver(ctx, foreign.ID, wid, did); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("another organization: %v", err)
		}
		if _, err := svc.Redeliver(ctx, bundle.org.ID, other, did); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("another webhook's delivery: %v", err)
		}
		if _, err := svc.Test(ctx, bundle.org.ID, wid); err != nil {
			t.Fatal(err)
		}
		testLog, _ := svc.Deliveries(ctx, bundle.org.ID, wid, 1)
		if _, err := svc.Redeliver(ctx, bundle.org.ID, wid, testLog[0].ID); !apperr.Is(err, apperr.Conflict) {
			t.Errorf("a test event: %v", err)
		}
		before = sent()
		if err := bundle.f.DB.Exec(`DELETE FROM events WHERE id = ?`, id).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Redeliver(ctx, bundle.org.ID, wid, did); !apperr.Is(err, apperr.Conflict) || !strings.Contains(err.Error(), "no longer kept") {
			t.Errorf("a purged event: %v", err)
		}
		if _, err := svc.Update(ctx, bundle.org.ID, wid, webhooks.Input{IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Redeliver(ctx, bundle.org.ID, wid, did); !apperr.Is(err, apperr.Conflict) || !strings.Contains(err.Error(), "inactive") {
			t.Errorf("an inactive webhook: %v", err)
		}
		if sent() != before {
			t.Errorf("a refused redelivery sent %d requests", sent()-before)
		}
	})
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f     *testfactory.Factory
		org   *testfactory.Org
		queue *testenv.Queue
	}
	setup := func(t *testing.T) (*webhooks.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, q := newService(t, f, true)
		return svc, &testBundle{f: f, org: f.Org(), queue: q}
	}

	t.Run("EmitWritesOnlyWhatSomebodyListensTo", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		if _, err := svc.Create(ctx, bundle.org.ID, webhooks.Input{Name: ptr("h"), URL: ptr("http://127.0.0.1:1/"),
			Events: &[]string{"message.incoming"}}); err != nil {
			t.Fatal(err)
		}
		paused := bundle.f.Org()
		if _, err := svc.Create(ctx, paused.ID, webhooks.Input{Name: ptr("h"), URL: ptr("http://127.0.0.1:1/"),
			Events: &[]string{"message.incoming"}, IsActive: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		var ids []uuid.UUID
		err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
			for _, e := range []struct {
				org   uuid.UUID
				event string
			}{{bundle.org.ID, "contact.created"}, {bundle.f.Org().ID, "message.incoming"}, {paused.ID, "message.incoming"},
				{bundle.org.ID, "message.incoming"}} {
				id, err := svc.Emit(ctx, tx, e.org, e.event, map[string]int{"n": 1})
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if ids[0] != uuid.Nil || ids[1] != uuid.Nil || ids[2] != uuid.Nil || ids[3] == uuid.Nil || bundle.f.Count("events", "") != 1 {
			t.Fatalf("emitted %v: want only the event an active webhook listens to", ids)
		}
		svc.Publish(ctx, bundle.org.ID, ids...)
		svc.Publish(ctx, bundle.org.ID, ids[3]) // a second publish is the same task
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeWebhookDispatch] != 1 || len(got) != 1 {
			t.Errorf("queued %v, want one dispatch", got)
		}
	})

	t.Run("AnInternalEventIsRecordedAlwaysAndConsumedBeforeItIsDispatched", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		// Nobody listens: Record writes the event anyway (the projector
		// needs it), Emit would not.
		var id uuid.UUID
		err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
			var err error
			id, err = svc.Record(ctx, tx, bundle.org.ID, webhooks.EventMessageChanged, map[string]string{"message_id": "m1"})
			return err
		})
		if err != nil || id == uuid.Nil || bundle.f.Count("events", "dispatched_at IS NULL") != 1 {
			t.Fatalf("recorded %v, %v: want one undispatched event", id, err)
		}
		// A subscriber that fails leaves the event undispatched: the task
		// is retried and the sweep enqueues it again.
		failing := &subscriber{err: errors.New("projector down")}
		if err := svc.Dispatch(ctx, bundle.org.ID, id, failing); err == nil || bundle.f.Count("events", "dispatched_at IS NULL") != 1 {
			t.Fatalf("dispatch with a failing subscriber: %v", err)
		}
		ok := &subscriber{}
		if err := svc.Dispatch(ctx, bundle.org.ID, id, ok); err != nil || bundle.f.Count("events", "dispatched_at IS NULL") != 0 {
			t.Fatalf("dispatch: %v", err)
		}
		if len(ok.got) != 1 || ok.got[0] != webhooks.EventMessageChanged+` {"message_id": "m1"}` {
			t.Fatalf("the subscriber got %q", ok.got)
		}
		// Dispatched once: a duplicate task gives it to nobody again.
		if err := svc.Dispatch(ctx, bundle.org.ID, id, ok); err != nil || len(ok.got) != 1 {
			t.Fatalf("a second dispatch: %v, %d consumed", err, len(ok.got))
		}
		// An internal event is not in the catalog: no webhook can take it.
		if _, err := svc.Create(ctx, bundle.org.ID, webhooks.Input{Name: ptr("h"), URL: ptr("http://127.0.0.1:1/"),
			Events: &[]string{webhooks.EventMessageChanged}}); err == nil {
			t.Fatal("a webhook subscribed to an internal event")
		}
	})

	t.Run("TheSweepRequeuesLostDispatchesAndForgetsOldEvents", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		now := time.Now().UTC()
		for _, e := range []struct {
			created    time.Duration
			dispatched *time.Time
		}{
			{-time.Minute, nil}, // lost: requeued
			{-time.Second, nil}, // recent: its task may still run
			{-8 * 24 * time.Hour, ptr(now.Add(-8 * 24 * time.Hour))}, // dispatched a week ago: deleted
			{-time.Hour, ptr(now.Add(-time.Hour))},                   // dispatched recently: kept
		} {
			ev := models.Event{ID: uuid.New(), OrganizationID: bundle.org.ID, Event: "contact.created", Data: []byte("{}"),
				CreatedAt: now.Add(e.created), DispatchedAt: e.dispatched}
			if err := bundle.f.DB.Create(&ev).Error; err != nil {
				t.Fatal(err)
			}
		}
		n, err := svc.SweepUndispatched(ctx)
		if err != nil || n != 1 {
			t.Fatalf("sweep: %d, %v; want the lost one requeued", n, err)
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeWebhookDispatch] != 1 {
			t.Errorf("queued %v", got)
		}
		if bundle.f.Count("events", "") != 3 {
			t.Error("want the week-old dispatched event deleted, the others kept")
		}
	})
}

// subscriber records what it consumed, or fails with err.
type subscriber struct {
	err error
	got []string
}

func (s *subscriber) Consume(_ context.Context, _ uuid.UUID, event string, data []byte) error {
	if s.err != nil {
		return s.err
	}
	s.got = append(s.got, event+" "+string(data))
	return nil
}
