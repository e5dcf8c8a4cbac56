package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// fakeProvider answers sends by the recipient's number: how answers a
// number's n-th request (n from 1); nil accepts. It counts the requests
// per number.
type fakeProvider struct {
	mu       sync.Mutex
	requests map[string]int
	how      func(to string, n int) func(w http.ResponseWriter)
	// hold, when set, keeps every request waiting until it is closed.
	hold chan struct{}
}

func (p *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		To string `json:"to"`
	}
	if !strings.HasSuffix(r.URL.Path, "/messages") || json.NewDecoder(r.Body).Decode(&body) != nil {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.requests[body.To]++
	n, hold := p.requests[body.To], p.hold
	p.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if p.how != nil {
		if answer := p.how(body.To, n); answer != nil {
			answer(w)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"messaging_product":"whatsapp","contacts":[{"input":%q,"wa_id":%q}],"messages":[{"id":"wamid.%s.%d"}]}`,
		body.To, body.To, body.To, n)
}

func (p *fakeProvider) count(to string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests[strings.TrimPrefix(to, "+")]
}

func (p *fakeProvider) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.requests {
		n += c
	}
	return n
}

// providerError answers a provider error.
func providerError(status, code int, retryAfter string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"(#%d) refused","type":"OAuthException","code":%d,"error_data":{"details":"refused by the test"}}}`, code, code)
	}
}

// brokenConnection closes the connection without an answer: the request
// reached the provider, its outcome is unknown.
func brokenConnection(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// The worker's message:send task claims a batch of its organization's
// queued template sends, sends them at once and settles each by its own
// outcome, sending nobody twice.
func TestQueuedBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		provider *fakeProvider
		queue    *testenv.Queue
		org      *testfactory.Org
		actor    messaging.Actor
		template models.Template
	}
	setup := func(t *testing.T, fp *fakeProvider) (*messaging.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		fp.requests = map[string]int{}
		srv := httptest.NewServer(fp)
		t.Cleanup(srv.Close)
		org := f.Org()
		acc := f.AccountAt(p, org.ID)
		tmpl := f.TemplateAt(p, acc, "Hi {{1}}")
		fake := *p
		fake.Client = platform.New(srv.URL, "", nil)
		svc, q := newService(t, f, &fake)
		return svc, &testBundle{f: f, provider: fp, queue: q, org: org, actor: messaging.Actor{UserID: f.User(org, "Agent").ID}, template: tmpl}
	}
	queue := func(t *testing.T, svc *messaging.Service, bundle *testBundle, orgID uuid.UUID, number string) uuid.UUID {
		t.Helper()
		q, err := svc.QueueTemplate(ctx, orgID, bundle.actor, messaging.TemplateInput{PhoneNumber: number,
			TemplateName: bundle.template.Name, Params: map[string]string{"1": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		return q.MessageID
	}
	// sendTasks are the message:send tasks waiting, by message.
	sendTasks := func(t *testing.T, q *testenv.Queue) map[uuid.UUID]int {
		t.Helper()
		out := map[uuid.UUID]int{}
		for _, ti := range q.Tasks(t) {
			if ti.Type != jobs.TypeMessageSend {
				continue
			}
			var p jobs.MessageSend
			if err := json.Unmarshal(ti.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out[p.MessageID]++
		}
		return out
	}

	t.Run("OneTaskSendsItsOrganizationsQueuedSendsOnly", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t, &fakeProvider{})
		var ids []uuid.UUID
		for i := range 5 {
			ids = append(ids, queue(t, svc, bundle, bundle.org.ID, fmt.Sprintf("+1555010600%d", i)))
		}
		// Another organization's queued send on the same provider.
		other := bundle.f.Org()
		otherAcc := bundle.f.Account(other.ID)
		otherTmpl := bundle.f.Template(otherAcc, "Hi {{1}}")
		oq, err := svc.QueueTemplate(ctx, other.ID, messaging.Actor{UserID: bundle.f.User(other, "Agent").ID},
			messaging.TemplateInput{PhoneNumber: "+15550106100", TemplateID: &otherTmpl.ID, Params: map[string]string{"1": "Bo"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.SendQueuedBatch(ctx, bundle.org.ID, ids[2], nil, false); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			m := reload(t, bundle.f.DB, id)
			if m.Status != models.StatusSent || m.PlatformMessageID == nil || bundle.provider.count(fmt.Sprintf("1555010600%d", i)) != 1 {
				t.Errorf("message %d: %s, %d requests; want sent by the one task, once", i, m.Status, bundle.provider.count(fmt.Sprintf("1555010600%d", i)))
			}
		}
		if m := reload(t, bundle.f.DB, oq.MessageID); m.Status != models.StatusPending || m.SendStartedAt != nil ||
			bundle.provider.count("15550106100") != 0 {
			t.Errorf("another organization's send: %s, started %v; want it untouched", m.Status, m.SendStartedAt)
		}
		var c models.Contact
		bundle.f.DB.Take(&c, "organization_id = ? AND phone_number = ?", bundle.org.ID, "+15550106003")
		if c.LastMessagePreview != "Hi Ada" || c.LastMessageDirection != models.DirectionOutgoing || c.LastMessageAt == nil {
			t.Errorf("contact after the batch: preview %q, direction %q, at %v", c.LastMessagePreview, c.LastMessageDirection, c.LastMessageAt)
		}
		// The other messages' own tasks find them sent: no second request.
		for _, id := range ids {
			if err := svc.SendQueuedBatch(ctx, bundle.org.ID, id, nil, false); err != nil {
				t.Fatal(err)
			}
		}
		if n := bundle.provider.total(); n != 5 {
			t.Errorf("%d requests after every task ran; want 5", n)
		}
	})

	t.Run("EachSendOfABatchSettlesByItsOwnOutcome", func(t *testing.T) {
		t.Parallel()
		// ...01 and ...02 are accepted; ...03 is rejected (131026); ...04 is
		// throttled once, then accepted; ...05's connection breaks.
		fp := &fakeProvider{how: func(to string, n int) func(http.ResponseWriter) {
			switch {
			case strings.HasSuffix(to, "03"):
				return providerError(http.StatusBadRequest, platform.CodeUndeliverable, "")
			case strings.HasSuffix(to, "04") && n == 1:
				return providerError(http.StatusBadRequest, platform.CodeThroughput, "2")
			case strings.HasSuffix(to, "05"):
				return brokenConnection
			}
			return nil
		}}
		svc, bundle := setup(t, fp)
		ids := map[string]uuid.UUID{}
		for _, n := range []string{"01", "02", "03", "04", "05"} {
			ids[n] = queue(t, svc, bundle, bundle.org.ID, "+155501070"+n)
		}
		before := sendTasks(t, bundle.queue)
		if err := svc.SendQueuedBatch(ctx, bundle.org.ID, ids["01"], nil, false); err != nil {
			t.Fatalf("the task of an accepted send: %v", err)
		}
		for n := range ids {
			if c := fp.count("+155501070" + n); c != 1 {
				t.Errorf("%s: %d requests; want 1", n, c)
			}
		}
		for _, n := range []string{"01", "02"} {
			if m := reload(t, bundle.f.DB, ids[n]); m.Status != models.StatusSent || m.PlatformMessageID == nil || m.SentAt == nil {
				t.Errorf("%s accepted: %+v; want sent with the provider's id", n, m)
			}
		}
		if m := reload(t, bundle.f.DB, ids["03"]); m.Status != models.StatusFailed || m.ErrorCode == nil ||
			*m.ErrorCode != platform.CodeUndeliverable || m.FailedAt == nil {
			t.Errorf("rejected: %s, code %v; want failed with 131026", m.Status, m.ErrorCode)
		}
		if m := reload(t, bundle.f.DB, ids["04"]); m.Status != models.StatusPending || m.SendStartedAt != nil {
			t.Errorf("throttled: %s, started %v; want pending and given back", m.Status, m.SendStartedAt)
		}
		if after := sendTasks(t, bundle.queue); after[ids["04"]] != before[ids["04"]]+1 {
			t.Errorf("throttled: %d send tasks (before the batch %d); want one more, after the wait", after[ids["04"]], before[ids["04"]])
		}
		if m := reload(t, bundle.f.DB, ids["05"]); m.Status != models.StatusPending || m.SendStartedAt == nil || m.PlatformMessageID != nil {
			t.Errorf("unknown outcome: %s, started %v; want left claimed (pending, started)", m.Status, m.SendStartedAt)
		}
		// Every task runs again (duplicates, retries after a crash): only
		// the throttled send goes out again, and is accepted; the unknown
		// one is not resent.
		for _, id := range ids {
			if err := svc.SendQueuedBatch(ctx, bundle.org.ID, id, nil, false); err != nil {
				t.Fatal(err)
			}
		}
		if c := fp.count("+15550107004"); c != 2 {
			t.Errorf("throttled: %d requests; want 2 (throttled, then accepted)", c)
		}
		if c := fp.count("+15550107005"); c != 1 {
			t.Errorf("unknown outcome: %d requests; want 1: never resent", c)
		}
		if m := reload(t, bundle.f.DB, ids["04"]); m.Status != models.StatusSent {
			t.Errorf("throttled, then retried: %s; want sent", m.Status)
		}
		if n := fp.total(); n != 6 {
			t.Errorf("%d requests in all; want 6", n)
		}
	})

	t.Run("TheTasksOwnSendWaitsWithItsTask", func(t *testing.T) {
		t.Parallel()
		fp := &fakeProvider{how: func(to string, n int) func(http.ResponseWriter) {
			return providerError(http.StatusBadRequest, platform.CodeThroughput, "3")
		}}
		svc, bundle := setup(t, fp)
		id := queue(t, svc, bundle, bundle.org.ID, "+15550108001")
		before := sendTasks(t, bundle.queue)
		err := svc.SendQueuedBatch(ctx, bundle.org.ID, id, nil, false)
		if rl, ok := jobs.IsRateLimited(err); !ok || rl.RetryAfter < 3*time.Second {
			t.Fatalf("own send throttled: %v; want a rate-limited retry after the provider's wait", err)
		}
		if after := sendTasks(t, bundle.queue); after[id] != before[id] {
			t.Errorf("own send throttled: %d tasks, before %d; want none added (its task retries)", after[id], before[id])
		}
		if m := reload(t, bundle.f.DB, id); m.Status != models.StatusPending || m.SendStartedAt != nil {
			t.Errorf("own send throttled: %s, started %v; want pending, given back", m.Status, m.SendStartedAt)
		}
	})

	t.Run("AWorkerKilledMidBatchSendsNobodyTwice", func(t *testing.T) {
		t.Parallel()
		// The first batch's requests hang at the provider: its worker is as
		// good as dead with the batch claimed. Every task of its messages
		// then runs (a retry, a duplicate, another worker): none may send.
		hold := make(chan struct{})
		fp := &fakeProvider{hold: hold}
		svc, bundle := setup(t, fp)
		var once sync.Once
		release := func() { once.Do(func() { close(hold) }) }
		t.Cleanup(release) // before the server's Close, which waits for the hung requests
		var ids []uuid.UUID
		for i := range 4 {
			ids = append(ids, queue(t, svc, bundle, bundle.org.ID, fmt.Sprintf("+1555010900%d", i)))
		}
		dead := make(chan error, 1)
		go func() { dead <- svc.SendQueuedBatch(ctx, bundle.org.ID, ids[0], nil, false) }()
		deadline := time.Now().Add(10 * time.Second)
		for fp.total() < len(ids) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := fp.total(); n != len(ids) {
			t.Fatalf("%d requests in flight; want the batch's %d", n, len(ids))
		}
		// A message queued after the claim is sent by the retried tasks.
		late := queue(t, svc, bundle, bundle.org.ID, "+15550109009")
		fp.mu.Lock()
		fp.hold = nil
		fp.mu.Unlock()
		for _, id := range append(ids, late) {
			if err := svc.SendQueuedBatch(ctx, bundle.org.ID, id, nil, true); err != nil {
				t.Fatal(err)
			}
			if err := svc.SendQueued(ctx, bundle.org.ID, id, true); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := svc.SweepUnconfirmed(ctx); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if c := fp.count(fmt.Sprintf("+1555010900%d", i)); c != 1 {
				t.Errorf("message %d: %d requests; want 1", i, c)
			}
			if m := reload(t, bundle.f.DB, id); m.Status != models.StatusPending || m.SendStartedAt == nil {
				t.Errorf("message %d while its batch hangs: %s, started %v; want claimed", i, m.Status, m.SendStartedAt)
			}
		}
		if c := fp.count("+15550109009"); c != 1 || reload(t, bundle.f.DB, late).Status != models.StatusSent {
			t.Errorf("the message queued after the claim: %d requests; want sent once", c)
		}
		// The hung requests answer at last: the batch settles them sent.
		release()
		if err := <-dead; err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if m := reload(t, bundle.f.DB, id); m.Status != models.StatusSent {
				t.Errorf("message %d once its batch returned: %s; want sent", i, m.Status)
			}
		}
		if n := fp.total(); n != len(ids)+1 {
			t.Errorf("%d requests in all; want %d: each message once", n, len(ids)+1)
		}
	})

	t.Run("AListeningWebhookGetsEachAcceptedSendsEvent", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t, &fakeProvider{})
		listen(t, bundle.f, bundle.org.ID, webhooks.EventMessageOutgoing)
		var ids []uuid.UUID
		for i := range 3 {
			ids = append(ids, queue(t, svc, bundle, bundle.org.ID, fmt.Sprintf("+1555011000%d", i)))
		}
		if err := svc.SendQueuedBatch(ctx, bundle.org.ID, ids[0], nil, false); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if m := reload(t, bundle.f.DB, id); m.Status != models.StatusSent {
				t.Errorf("message %d: %s; want sent", i, m.Status)
			}
		}
		if n := bundle.f.Count("events", "organization_id = ? AND event = ?", bundle.org.ID, webhooks.EventMessageOutgoing); n != 3 {
			t.Errorf("%d message.outgoing events; want 3", n)
		}
	})

	t.Run("AProjectedMessageOfTheBatchRecordsEachChange", func(t *testing.T) {
		t.Parallel()
		// ...9901 is accepted, ...9902 rejected (131026), ...9903's
		// connection breaks: the sweeper fails it later. Each is a
		// batch-mate of the API send's task, and a framework document
		// projects it (QueueTemplateIn + Project, as messages queues one).
		fp := &fakeProvider{how: func(to string, n int) func(http.ResponseWriter) {
			switch {
			case strings.HasSuffix(to, "9902"):
				return providerError(http.StatusBadRequest, platform.CodeUndeliverable, "")
			case strings.HasSuffix(to, "9903"):
				return brokenConnection
			}
			return nil
		}}
		svc, bundle := setup(t, fp)
		org := bundle.org.ID
		project := func(number string) uuid.UUID {
			t.Helper()
			c := bundle.f.Contact(org, &bundle.template.AccountID, func(c *models.Contact) { c.PhoneNumber = number })
			var id uuid.UUID
			err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
				var err error
				if id, err = svc.QueueTemplateIn(ctx, tx, org, c.ID, bundle.template.AccountID, &bundle.template,
					map[string]string{"1": "Ada"}); err != nil {
					return err
				}
				return svc.Project(ctx, tx, org, id)
			})
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		accepted, refused, unknown := project("+15550119901"), project("+15550119902"), project("+15550119903")
		plain := queue(t, svc, bundle, org, "+15550119904")
		changed := func() map[uuid.UUID]int {
			t.Helper()
			var ids []uuid.UUID
			bundle.f.DB.Raw(`SELECT CAST(data->>'message_id' AS uuid) FROM events WHERE organization_id = ? AND event = ?`,
				org, webhooks.EventMessageChanged).Scan(&ids)
			out := map[uuid.UUID]int{}
			for _, id := range ids {
				out[id]++
			}
			return out
		}
		if err := svc.SendQueuedBatch(ctx, org, plain, nil, false); err != nil {
			t.Fatal(err)
		}
		if m := reload(t, bundle.f.DB, accepted); m.Status != models.StatusSent || m.PlatformMessageID == nil {
			t.Errorf("projected, accepted: %s, id %v; want sent with the provider's id", m.Status, m.PlatformMessageID)
		}
		if m := reload(t, bundle.f.DB, refused); m.Status != models.StatusFailed || m.ErrorCode == nil || *m.ErrorCode != platform.CodeUndeliverable {
			t.Errorf("projected, refused: %s, code %v; want failed with 131026", m.Status, m.ErrorCode)
		}
		if m := reload(t, bundle.f.DB, plain); m.Status != models.StatusSent {
			t.Errorf("the task's own send: %s; want sent", m.Status)
		}
		got := changed()
		if len(got) != 2 || got[accepted] != 1 || got[refused] != 1 {
			t.Errorf("message.changed events by message %v; want one for the accepted and one for the refused projected send", got)
		}
		if n := bundle.queue.TaskTypes(t)[jobs.TypeWebhookDispatch]; n != 2 {
			t.Errorf("%d dispatch tasks; want 2 (each change published)", n)
		}
		// The unknown one stays claimed until the sweeper gives up on it:
		// its failure is a change the document must see too.
		if m := reload(t, bundle.f.DB, unknown); m.Status != models.StatusPending || m.SendStartedAt == nil {
			t.Fatalf("projected, unknown: %s; want pending and claimed", m.Status)
		}
		bundle.f.DB.Exec(`UPDATE messages SET send_started_at = now() - interval '11 minutes' WHERE id = ?`, unknown)
		if _, failed, err := svc.SweepUnconfirmed(ctx); err != nil || failed != 1 {
			t.Fatalf("sweep: %d failed, %v; want the unknown send failed", failed, err)
		}
		if m := reload(t, bundle.f.DB, unknown); m.Status != models.StatusFailed {
			t.Errorf("projected, unknown, swept: %s; want failed", m.Status)
		}
		if got := changed(); len(got) != 3 || got[unknown] != 1 {
			t.Errorf("message.changed events after the sweep %v; want one more, for the swept send", got)
		}
		// A send no document projects records no such event.
		if got := changed(); got[plain] != 0 {
			t.Errorf("the API send recorded %d message.changed events", got[plain])
		}
	})

	t.Run("ABatchMateThatKeepsFailingFailsAfterItsTries", func(t *testing.T) {
		t.Parallel()
		// ...2001 is accepted; ...2002 meets a transient error every time;
		// ...2003 is throttled three times (waits use up no try), then meets
		// a transient error every time. The two are batch-mates of 2001's
		// task, which runs again and again (duplicates, retries): each run
		// claims them, and each time a transient error gave them back with
		// a new task of their own.
		fp := &fakeProvider{how: func(to string, n int) func(http.ResponseWriter) {
			switch {
			case strings.HasSuffix(to, "2003") && n <= 3:
				return providerError(http.StatusBadRequest, platform.CodeThroughput, "1")
			case strings.HasSuffix(to, "2002"), strings.HasSuffix(to, "2003"):
				return providerError(http.StatusInternalServerError, platform.CodeGeneric, "")
			}
			return nil
		}}
		svc, bundle := setup(t, fp)
		org := bundle.org.ID
		flaky := queue(t, svc, bundle, org, "+15550112002")
		waits := queue(t, svc, bundle, org, "+15550112003")
		own := queue(t, svc, bundle, org, "+15550112001")
		for range jobs.MessageSendAttempts + 6 {
			if err := svc.SendQueuedBatch(ctx, org, own, nil, false); err != nil {
				t.Fatal(err)
			}
		}
		if c := fp.count("+15550112001"); c != 1 || reload(t, bundle.f.DB, own).Status != models.StatusSent {
			t.Errorf("the task's own send: %d requests; want sent once", c)
		}
		if c := fp.count("+15550112002"); c != jobs.MessageSendAttempts {
			t.Errorf("the failing mate: %d requests; want %d (the tries of a message:send task)", c, jobs.MessageSendAttempts)
		}
		if c := fp.count("+15550112003"); c != jobs.MessageSendAttempts+3 {
			t.Errorf("the mate that waited, then failed: %d requests; want %d (3 waits + the tries)", c, jobs.MessageSendAttempts+3)
		}
		for _, id := range []uuid.UUID{flaky, waits} {
			m := reload(t, bundle.f.DB, id)
			if m.Status != models.StatusFailed || m.ErrorCode == nil || *m.ErrorCode != platform.CodeGeneric || m.FailedAt == nil ||
				m.PlatformMessageID != nil {
				t.Errorf("a mate after its tries: %s, code %v; want failed with the provider's 131000", m.Status, m.ErrorCode)
			}
			if m.SendAttempts != jobs.MessageSendAttempts {
				t.Errorf("a mate after its tries: %d attempts counted; want %d", m.SendAttempts, jobs.MessageSendAttempts)
			}
		}
		// Failed, it is no longer given back: its tasks find nothing to send.
		tasks := sendTasks(t, bundle.queue)
		if tasks[flaky] != jobs.MessageSendAttempts {
			t.Errorf("the failing mate has %d send tasks; want %d: its first and one per transient error but the last",
				tasks[flaky], jobs.MessageSendAttempts)
		}
		for _, id := range []uuid.UUID{flaky, waits} {
			if err := svc.SendQueuedBatch(ctx, org, id, nil, false); err != nil {
				t.Fatal(err)
			}
		}
		if n := fp.total(); n != 1+jobs.MessageSendAttempts+jobs.MessageSendAttempts+3 {
			t.Errorf("%d requests in all; want %d", n, 1+2*jobs.MessageSendAttempts+3)
		}
	})
}
