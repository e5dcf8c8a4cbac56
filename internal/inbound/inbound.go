// Package inbound receives the provider's webhooks and dispatches them to
// the consumers registered in app/. The api only verifies and stores them
// (inbound_events) and enqueues their processing, so it answers in
// milliseconds; the worker hands them to the consumers: incoming messages
// to the MessageConsumers, statuses to the StatusConsumers, other event
// types (template status updates) to their EventConsumer.
//
// Files: intake.go (verify, split, store, enqueue), groupcommit.go (the
// batched writes of concurrent webhooks), failures.go (the limit
// on refused webhooks), process.go (one contact's events, in order),
// statuses.go (status batches), sweep.go (lost tasks, old events),
// consumers.go (the consumer contract).
//
// One contact's events are applied one at a time in arrival order, under a
// transaction-level advisory lock keyed by account and contact; duplicates
// change nothing (messages are unique by account and provider id, statuses
// only move forward).
package inbound

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/platform"
)

// Event types stored in inbound_events.
const (
	EventMessages       = "messages"        // one contact's incoming messages: applied in order
	EventStatuses       = "statuses"        // statuses of our messages: applied in bulk, in any order
	EventTemplateStatus = "template_status" // a template's review outcome
)

// eventTypeOf is the type under which changes of a webhook field other
// than messages are stored: the field's name (template status updates keep
// the type their stored events have always had). They are stored only
// when an EventConsumer consumes that type.
func eventTypeOf(field string) string {
	if field == platform.FieldTemplateStatus {
		return EventTemplateStatus
	}
	return field
}

// Service receives provider webhooks and dispatches them to consumers.
type Service struct {
	db           *gorm.DB
	accounts     *accounts.Service
	contacts     *contacts.Service
	webhooks     *webhooks.Service
	enq          *jobs.Enqueuer
	limiter      *ratelimit.Limiter
	failures     ratelimit.FailureLimit
	consumers    consumers
	commits      *groupCommit
	routeCache   routeCache
	sourceCache  sourceCache
	metrics      *metrics.Set
	globalSecret string
	verifyToken  string
	log          *slog.Logger
	now          func() time.Time
}

// Deps are the collaborators of the inbound domain.
type Deps struct {
	DB       *gorm.DB
	Accounts *accounts.Service
	Contacts *contacts.Service
	Webhooks *webhooks.Service
	Enqueuer *jobs.Enqueuer
	Limiter  *ratelimit.Limiter // counts refused webhooks per client address
	// Consumers apply the events, in this order (see Consumer).
	Consumers    []Consumer
	Metrics      *metrics.Set // events stored and applied, and their lag (nil: none)
	GlobalSecret string       // PLATFORM_APP_SECRET
	Log          *slog.Logger
}

// SetVerifyToken sets the global verify token (PLATFORM_WEBHOOK_VERIFY_TOKEN)
// accepted by the handshake besides the accounts' own tokens.
func (s *Service) SetVerifyToken(token string) { s.verifyToken = token }

// NewService wires the inbound domain. It fails when a consumer implements
// no consumer interface or two consume the same event type.
func NewService(d Deps) (*Service, error) {
	cs, err := register(d.Consumers)
	if err != nil {
		return nil, err
	}
	s := &Service{db: d.DB, accounts: d.Accounts, contacts: d.Contacts, webhooks: d.Webhooks,
		enq: d.Enqueuer, limiter: d.Limiter, failures: ratelimit.FailureLimit{Max: maxSourceFailures, Window: sourceFailureWindow},
		consumers: cs, metrics: d.Metrics, globalSecret: d.GlobalSecret, log: d.Log,
		now: func() time.Time { return time.Now().UTC() }}
	s.commits = &groupCommit{db: d.DB, committed: s.countStored, stored: s.enqueueStored}
	return s, nil
}

// Verify answers the provider's subscription handshake: the challenge when
// the mode is subscribe and the token belongs to an account (or is the
// global verify token).
func (s *Service) Verify(ctx context.Context, mode, token, challenge string) (string, error) {
	if mode != "subscribe" || token == "" || challenge == "" {
		return "", apperr.Forbiddenf("verification failed")
	}
	if s.verifyToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.verifyToken)) == 1 {
		return challenge, nil
	}
	ok, err := s.accounts.HasVerifyToken(ctx, token)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", apperr.Forbiddenf("verification failed")
	}
	return challenge, nil
}
