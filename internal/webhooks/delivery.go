package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/safehttp"
	"wharf/jobs"
	"wharf/models"
)

// Signature returns the X-Webhook-Signature value of body under secret.
func Signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// body is the delivered JSON: the spec's {event, timestamp, data}.
func body(event string, at time.Time, data json.RawMessage) ([]byte, error) {
	return json.Marshal(struct {
		Event     string          `json:"event"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{event, at.UTC().Format(time.RFC3339), data})
}

// Result is the outcome of one delivery attempt.
type Result struct {
	Success    bool
	StatusCode int
	Error      string
	Duration   time.Duration
	// Response is the start of the endpoint's answer (keptResponse bytes).
	Response string
}

// What the delivery log keeps of an attempt's bodies: enough to see why an
// endpoint refused an event, bounded so that the log (keepDeliveries
// attempts a webhook) stays small.
const (
	keptRequest  = 16 << 10
	keptResponse = 4 << 10
)

// logText is a body as the log keeps it: clipped, valid UTF-8, without NUL
// (which PostgreSQL's text refuses).
func logText(b []byte, n int) string {
	return apperr.Clip(strings.ReplaceAll(string(b), "\x00", ""), n)
}

// outcome names a delivery attempt's outcome for the metrics: a failed
// attempt before the last one gets another (scheduleAttempt).
func outcome(r Result, attempt int) metrics.DeliveryOutcome {
	switch {
	case r.Success:
		return metrics.DeliverySuccess
	case attempt < MaxAttempts:
		return metrics.DeliveryRetry
	}
	return metrics.DeliveryDropped
}

// post makes one attempt. Any 2xx is a success.
func (s *Service) post(ctx context.Context, w *models.Webhook, eventID uuid.UUID, event string, payload []byte) Result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(payload))
	if err != nil {
		return s.failed(w, err, start)
	}
	for k, v := range w.Headers.V {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("X-Webhook-Event", event)
	req.Header.Set("X-Webhook-ID", eventID.String())
	if len(w.SecretEnc) > 0 {
		secret, err := s.box.OpenString(w.SecretEnc)
		if err != nil {
			return Result{Error: "cannot decrypt the webhook secret", Duration: time.Since(start)}
		}
		req.Header.Set(SignatureHeader, Signature(secret, payload))
	}
	res, err := s.client.Do(req)
	if err != nil {
		return s.failed(w, err, start)
	}
	defer res.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(res.Body, keptResponse))
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	r := Result{StatusCode: res.StatusCode, Success: res.StatusCode/100 == 2, Duration: time.Since(start), Response: logText(head, keptResponse)}
	if !r.Success {
		r.Error = fmt.Sprintf("endpoint answered %s", res.Status)
	}
	return r
}

// failed is an attempt that got no answer. The delivery log and the test
// endpoint say only "the address is not allowed" or "could not be
// reached": the error names the address the host resolved to, which would
// map the internal network for whoever can set the URL. The log has it.
func (s *Service) failed(w *models.Webhook, err error, start time.Time) Result {
	s.log.Info("webhook delivery got no answer", "webhook_id", w.ID, "error", err)
	return Result{Error: safehttp.Public(err), Duration: time.Since(start)}
}

// attempt is one delivery attempt to record: what was sent and its outcome.
type attempt struct {
	eventID    *uuid.UUID
	event      string
	number     int
	payload    []byte
	redelivery bool
}

// record keeps the attempt in the webhook's delivery log (the last 100) and
// returns the row.
func (s *Service) record(ctx context.Context, w *models.Webhook, a attempt, r Result) *models.WebhookDelivery {
	d := models.WebhookDelivery{OrganizationID: w.OrganizationID, WebhookID: w.ID, EventID: a.eventID, Event: a.event,
		Attempt: a.number, Success: r.Success, StatusCode: r.StatusCode, Error: apperr.Clip(r.Error, 500),
		DurationMS: int(r.Duration.Milliseconds()), RequestBody: logText(a.payload, keptRequest), ResponseBody: r.Response,
		Redelivery: a.redelivery, CreatedAt: s.now()}
	db := s.db.WithContext(context.WithoutCancel(ctx))
	if err := db.Create(&d).Error; err != nil {
		s.log.Warn("cannot record webhook delivery", "webhook_id", w.ID, "error", err)
		return &d
	}
	if d.ID%20 == 0 { // trim now and then, not on every attempt
		err := db.Exec(`DELETE FROM webhook_deliveries WHERE webhook_id = ? AND id <= (
			SELECT id FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC OFFSET ? LIMIT 1)`, w.ID, w.ID, keepDeliveries).Error
		if err != nil {
			s.log.Warn("cannot trim the webhook delivery log", "webhook_id", w.ID, "error", err)
		}
	}
	return &d
}

// Test sends an `event: test` to a webhook synchronously and reports the
// outcome; it is logged like any delivery.
func (s *Service) Test(ctx context.Context, orgID, id uuid.UUID) (*Result, error) {
	w, err := s.get(ctx, s.db, orgID, id)
	if err != nil {
		return nil, err
	}
	eventID := uuid.New()
	data, _ := json.Marshal(map[string]any{"webhook_id": w.ID, "message": "This is a test event from Wharf."})
	payload, err := body(EventTest, s.now(), data)
	if err != nil {
		return nil, err
	}
	r := s.post(ctx, w, eventID, EventTest, payload)
	s.record(ctx, w, attempt{eventID: &eventID, event: EventTest, number: 1, payload: payload}, r)
	return &r, nil
}

// Subscriber consumes the outbox's events in the process that dispatches
// them, before any webhook gets them: the framework's projector (a message
// that a document projects changed). An error leaves the event undispatched:
// the task is retried, and the sweeper enqueues it again, so a subscriber
// sees an event at least once and must be idempotent.
type Subscriber interface {
	Consume(ctx context.Context, orgID uuid.UUID, event string, data []byte) error
}

// Dispatch gives an outbox event to subs, then delivers it to every active
// subscribed webhook, at most MaxConcurrent at a time. Failed deliveries get
// their next attempt as a delayed task. Dispatching an event twice delivers
// it twice (at least once); receivers can use X-Webhook-ID to drop
// duplicates.
func (s *Service) Dispatch(ctx context.Context, orgID, eventID uuid.UUID, subs ...Subscriber) error {
	var ev models.Event
	err := s.db.WithContext(ctx).Where("organization_id = ?", orgID).Take(&ev, "id = ?", eventID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil // purged or never committed
	}
	if err != nil {
		return err
	}
	if ev.DispatchedAt != nil {
		return nil
	}
	for _, sub := range subs {
		if err := sub.Consume(ctx, orgID, ev.Event, ev.Data); err != nil {
			return err
		}
	}
	var hooks []models.Webhook
	err = s.db.WithContext(ctx).Where("organization_id = ? AND is_active AND events @> jsonb_build_array(?::text)", orgID, ev.Event).
		Find(&hooks).Error
	if err != nil {
		return err
	}
	payload, err := body(ev.Event, ev.CreatedAt, ev.Data)
	if err != nil {
		return err
	}
	sem := make(chan struct{}, MaxConcurrent)
	var wg sync.WaitGroup
	for i := range hooks {
		w := &hooks[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := s.post(ctx, w, ev.ID, ev.Event, payload)
			s.metrics.WebhookDelivery(outcome(r, 1), r.Duration)
			s.record(ctx, w, attempt{eventID: &ev.ID, event: ev.Event, number: 1, payload: payload}, r)
			if !r.Success {
				s.scheduleAttempt(ctx, orgID, w.ID, ev.ID, 2)
			}
		}()
	}
	wg.Wait()
	return s.db.WithContext(ctx).Model(&models.Event{}).Where("id = ?", ev.ID).Update("dispatched_at", s.now()).Error
}

func (s *Service) scheduleAttempt(ctx context.Context, orgID, webhookID, eventID uuid.UUID, attempt int) {
	_, err := s.enq.Enqueue(context.WithoutCancel(ctx),
		jobs.WebhookDeliver{OrganizationID: orgID, WebhookID: webhookID, EventID: eventID, Attempt: attempt},
		jobs.At(s.now().Add(retryDelay(attempt))))
	if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
		s.log.Warn("cannot schedule webhook retry", "webhook_id", webhookID, "event_id", eventID, "error", err)
	}
}

// Deliver is a retry attempt for one webhook. After MaxAttempts the event is
// dropped for that webhook; the delivery log shows why.
func (s *Service) Deliver(ctx context.Context, orgID, webhookID, eventID uuid.UUID, n int) error {
	var ev models.Event
	if err := s.db.WithContext(ctx).Where("organization_id = ?", orgID).Take(&ev, "id = ?", eventID).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		}
		return err
	}
	w, err := s.get(ctx, s.db, orgID, webhookID)
	if apperr.Is(err, apperr.NotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	if !w.IsActive {
		return nil
	}
	payload, err := body(ev.Event, ev.CreatedAt, ev.Data)
	if err != nil {
		return err
	}
	r := s.post(ctx, w, ev.ID, ev.Event, payload)
	s.metrics.WebhookDelivery(outcome(r, n), r.Duration)
	s.record(ctx, w, attempt{eventID: &ev.ID, event: ev.Event, number: n, payload: payload}, r)
	if !r.Success {
		if n < MaxAttempts {
			s.scheduleAttempt(ctx, orgID, w.ID, ev.ID, n+1)
		} else {
			s.log.Warn("webhook delivery dropped after the last attempt", "webhook_id", w.ID, "event", ev.Event,
				"event_id", ev.ID, "error", r.Error)
		}
	}
	return nil
}
