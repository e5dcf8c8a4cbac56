package platformsim

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"
)

// Webhook envelope, as the provider posts it.
type envelope struct {
	Object string  `json:"object"`
	Entry  []entry `json:"entry"`
}

type entry struct {
	ID      string   `json:"id"`
	Changes []change `json:"changes"`
}

type change struct {
	Field string `json:"field"`
	Value any    `json:"value"`
}

type metadata struct {
	DisplayPhoneNumber string `json:"display_phone_number"`
	PhoneNumberID      string `json:"phone_number_id"`
}

// messagesValue is the value of a "messages" (and "calls") change.
type messagesValue struct {
	MessagingProduct string           `json:"messaging_product"`
	Metadata         metadata         `json:"metadata"`
	Contacts         []contactJSON    `json:"contacts,omitempty"`
	Messages         []any            `json:"messages,omitempty"`
	Statuses         []statusJSON     `json:"statuses,omitempty"`
	Calls            []map[string]any `json:"calls,omitempty"`
}

type contactJSON struct {
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
	WaID string `json:"wa_id"`
}

func newEnvelope(wabaID, field string, value any) envelope {
	return envelope{Object: "whatsapp_business_account", Entry: []entry{{
		ID: wabaID, Changes: []change{{Field: field, Value: value}},
	}}}
}

func (p *phone) messagesValue() messagesValue {
	return messagesValue{MessagingProduct: "whatsapp",
		Metadata: metadata{DisplayPhoneNumber: p.displayDigits, PhoneNumberID: p.id}}
}

// delivery is one webhook on its way, possibly retried. Status webhooks
// keep their statuses too, which is what the webhook log stores.
type delivery struct {
	body     []byte
	statuses []statusItem
	record   *webhookRecord
	attempts int
	gen      uint64 // dropped when Reset happened since
}

// statusItem is one status of one message, waiting in the queue or
// recorded in the webhook log. It is deliberately small, and the webhook
// body is rendered from it when needed, because a benchmark produces three
// per message; everything it renders from is immutable.
type statusItem struct {
	msg       *message
	status    string
	at        int64 // unix seconds
	errorCode int
}

// renderStatuses builds the webhook of statuses of one phone number.
func renderStatuses(items []statusItem) ([]byte, error) {
	ph := items[0].msg.phone
	value := ph.messagesValue()
	value.Statuses = make([]statusJSON, 0, len(items))
	for _, it := range items {
		value.Statuses = append(value.Statuses, it.msg.statusJSON(it.status, time.Unix(it.at, 0), it.errorCode))
	}
	return json.Marshal(newEnvelope(ph.waba.id, "messages", value))
}

type queueItem struct {
	phoneID string    // take statuses queued for this phone number
	d       *delivery // or post this prepared body
}

// webhookQueue feeds the sender pool. Prepared bodies and per-phone status
// lists share one FIFO; a phone number appears in the FIFO once while it has
// statuses waiting, which lets a sender batch them without scanning.
type webhookQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	fifo     []queueItem
	head     int
	statuses map[string][]statusItem
	closed   bool
}

func newWebhookQueue() *webhookQueue {
	q := &webhookQueue{statuses: make(map[string][]statusItem)}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *webhookQueue) pushDelivery(d *delivery) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.fifo = append(q.fifo, queueItem{d: d})
	q.cond.Signal()
}

func (q *webhookQueue) pushStatus(phoneID string, it statusItem) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	waiting := q.statuses[phoneID]
	q.statuses[phoneID] = append(waiting, it)
	if len(waiting) == 0 {
		q.fifo = append(q.fifo, queueItem{phoneID: phoneID})
		q.cond.Signal()
	}
}

// pop blocks until there is work: a prepared delivery, or up to batch
// statuses of one phone number. ok is false once the queue is closed.
func (q *webhookQueue) pop(batch int) (d *delivery, statuses []statusItem, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.fifo) && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, nil, false
	}
	it := q.fifo[q.head]
	q.fifo[q.head] = queueItem{}
	q.head++
	if q.head > 1024 && q.head*2 > len(q.fifo) {
		q.fifo = append(q.fifo[:0], q.fifo[q.head:]...)
		q.head = 0
	}
	if it.d != nil {
		return it.d, nil, true
	}
	waiting := q.statuses[it.phoneID]
	n := min(batch, len(waiting))
	statuses = append([]statusItem(nil), waiting[:n]...)
	if rest := waiting[n:]; len(rest) > 0 {
		q.statuses[it.phoneID] = rest
		q.fifo = append(q.fifo, queueItem{phoneID: it.phoneID})
		q.cond.Signal()
	} else {
		delete(q.statuses, it.phoneID)
	}
	return nil, statuses, true
}

func (q *webhookQueue) clear() {
	q.mu.Lock()
	q.fifo, q.head = nil, 0
	q.statuses = make(map[string][]statusItem)
	q.mu.Unlock()
}

func (q *webhookQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

func (s *Simulator) runSender() {
	for {
		batch := s.config().StatusBatchSize
		d, statuses, ok := s.queue.pop(batch)
		if !ok {
			return
		}
		if statuses != nil {
			d = s.statusDelivery(statuses)
			if d == nil {
				continue
			}
		}
		s.deliver(d)
	}
}

// statusDelivery turns queued statuses of one phone number into one
// webhook, dropping those queued before a Reset.
func (s *Simulator) statusDelivery(items []statusItem) *delivery {
	gen := s.gen.Load()
	items = slices.DeleteFunc(items, func(it statusItem) bool { return it.msg.gen != gen })
	if len(items) == 0 {
		return nil
	}
	body, err := renderStatuses(items)
	if err != nil {
		s.log.Error("platformsim: encode status webhook", "err", err)
		return nil
	}
	return &delivery{body: body, statuses: items, gen: gen}
}

// enqueue posts body through the sender pool (with retries).
func (s *Simulator) enqueue(body []byte) {
	s.queue.pushDelivery(&delivery{body: body, gen: s.gen.Load()})
}

// deliver makes one attempt and schedules the next one on failure: 1 s,
// 2 s, then 4 s later, four attempts in all.
func (s *Simulator) deliver(d *delivery) {
	if backoff, retry := s.attempt(d); retry {
		s.sched.push(event{at: time.Now().Add(backoff), kind: evRetry, d: d})
	}
}

// deliverInOrder posts body with the same retries as deliver but in the
// calling goroutine, so that webhooks that must arrive in order (a call's
// RINGING, connect, ACCEPTED) are not reordered by the sender pool.
func (s *Simulator) deliverInOrder(body []byte) {
	d := &delivery{body: body, gen: s.gen.Load()}
	for {
		backoff, retry := s.attempt(d)
		if !retry {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return
		}
	}
}

// attempt makes one delivery attempt and says whether to retry, and when.
func (s *Simulator) attempt(d *delivery) (backoff time.Duration, retry bool) {
	if d.gen != s.gen.Load() {
		return 0, false
	}
	url := s.config().WebhookURL
	if url == "" {
		s.log.Debug("platformsim: no webhook URL, webhook dropped")
		return 0, false
	}
	if d.record == nil {
		d.record = s.recordWebhook(d)
	}
	code, err := s.post(s.ctx, url, d.body)
	d.attempts++
	s.updateWebhook(d.record, d.attempts, code, err)
	if err == nil && code/100 == 2 {
		return 0, false
	}
	if s.ctx.Err() != nil {
		return 0, false
	}
	if d.attempts >= maxWebhookAttempts {
		s.log.Warn("platformsim: webhook given up", "webhook_id", d.record.id, "attempts", d.attempts, "status", code, "err", err)
		return 0, false
	}
	backoff = time.Second << (d.attempts - 1)
	s.log.Debug("platformsim: webhook failed, will retry", "webhook_id", d.record.id, "status", code, "err", err, "in", backoff)
	return backoff, true
}

// errNoWebhookURL is returned by the synchronous posts when no webhook URL
// is configured.
var errNoWebhookURL = errors.New("platformsim: no webhook URL configured")

// postNow posts body once, synchronously, and records it. A non-2xx answer
// is not an error: the caller gets the status code.
func (s *Simulator) postNow(ctx context.Context, body []byte) (int, error) {
	url := s.config().WebhookURL
	if url == "" {
		return 0, errNoWebhookURL
	}
	rec := s.recordWebhook(&delivery{body: body})
	code, err := s.post(ctx, url, body)
	s.updateWebhook(rec, 1, code, err)
	return code, err
}

// Sign returns the X-Hub-Signature-256 header value for body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func (s *Simulator) post(ctx context.Context, url string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "platformsim")
	req.Header.Set("X-Hub-Signature-256", Sign(s.config().AppSecret, body))
	res, err := s.client.Do(req)
	if err != nil {
		return 0, &postError{err: err}
	}
	// Draining lets the connection be reused, which matters at benchmark
	// rates.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	res.Body.Close()
	return res.StatusCode, nil
}

// postError is a webhook post that failed on the network (no HTTP answer).
type postError struct{ err error }

func (e *postError) Error() string { return "post webhook: " + e.err.Error() }
func (e *postError) Unwrap() error { return e.err }

// webhookRecord is the webhook log's entry: the body of prepared webhooks,
// the statuses of status webhooks.
type webhookRecord struct {
	id         int64
	at         time.Time
	body       []byte
	statuses   []statusItem
	attempts   int
	statusCode int
	err        string
}

// Webhook is a posted webhook as the control API reports it. StatusCode is
// the receiver's answer to the last attempt (0 on a network error, Error
// then says why).
type Webhook struct {
	ID         int64           `json:"id"`
	At         time.Time       `json:"at"`
	Body       json.RawMessage `json:"body"`
	Attempts   int             `json:"attempts"`
	StatusCode int             `json:"status_code"`
	Error      string          `json:"error,omitempty"`
}

func (s *Simulator) recordWebhook(d *delivery) *webhookRecord {
	rec := &webhookRecord{at: time.Now(), statuses: d.statuses}
	if d.statuses == nil {
		rec.body = d.body
	}
	s.whMu.Lock()
	s.nextWhID++
	rec.id = s.nextWhID
	s.webhooks = append(s.webhooks, rec)
	s.whMu.Unlock()
	return rec
}

func (s *Simulator) updateWebhook(rec *webhookRecord, attempts, code int, err error) {
	s.whMu.Lock()
	rec.attempts = attempts
	rec.statusCode = code
	rec.err = ""
	if err != nil {
		rec.err = err.Error()
	}
	s.whMu.Unlock()
}

// Webhooks returns the webhooks posted so far, oldest first.
func (s *Simulator) Webhooks() []Webhook {
	return s.WebhooksSince(0)
}

// WebhooksSince returns the webhooks with an id above since.
func (s *Simulator) WebhooksSince(since int64) []Webhook {
	s.whMu.Lock()
	from := sort.Search(len(s.webhooks), func(i int) bool { return s.webhooks[i].id > since })
	out := make([]Webhook, 0, len(s.webhooks)-from)
	var statuses [][]statusItem
	for _, r := range s.webhooks[from:] {
		out = append(out, Webhook{ID: r.id, At: r.at, Body: r.body, Attempts: r.attempts, StatusCode: r.statusCode, Error: r.err})
		statuses = append(statuses, r.statuses)
	}
	s.whMu.Unlock()
	// Rendering happens outside the lock so that a large log does not stall
	// the senders.
	for i, items := range statuses {
		if items != nil {
			out[i].Body, _ = renderStatuses(items)
		}
	}
	return out
}
