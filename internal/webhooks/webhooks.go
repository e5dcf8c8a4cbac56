// Package webhooks owns the organization's outbound webhooks: their
// configuration, the outbox of events, and delivery. Events are written to
// the outbox in the transaction of the change that caused them, then
// dispatched by the worker: a crash between the two loses nothing, because a
// sweeper re-enqueues undispatched events.
package webhooks

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/secrets"
	"wharf/internal/infra/tenant"
	"wharf/internal/infra/versioned"
	"wharf/jobs"
	"wharf/models"
)

// The events organizations can subscribe to.
const (
	EventMessageIncoming  = "message.incoming"
	EventMessageSent      = "message.sent"
	EventMessageOutgoing  = "message.outgoing"
	EventContactCreated   = "contact.created"
	EventContactOptedOut  = "contact.opted_out"
	EventContactOptedIn   = "contact.opted_in"
	EventTransferCreated  = "transfer.created"
	EventTransferAssigned = "transfer.assigned"
	EventTransferResumed  = "transfer.resumed"
	// EventTest is only sent by the test endpoint.
	EventTest = "test"
)

// EventMessageChanged is an internal event, not in the Catalog (no webhook
// subscribes to it): a message that a framework document projects
// (models.Message.Projected) changed. Its data is {"message_id": core id};
// the projector (a Subscriber, internal/integration/messages) reads the row itself, so
// the events of one message may be applied in any order and more than once.
const EventMessageChanged = "message.changed"

// EventCampaignChanged is an internal event, not in the Catalog (no webhook
// subscribes to it): a campaign that a framework document projects
// (models.Campaign.Projected, a bulk message) changed: a chunk's sends
// settled, provider statuses moved recipients, or a recount. Its data is
// campaigns.Change; the projector (a Subscriber, internal/integration/bulk) reads
// the rows itself, so the events may be applied in any order and more than
// once.
const EventCampaignChanged = "campaign.changed"

// EventInfo describes a subscribable event.
type EventInfo struct {
	Event       string `json:"event"`
	Description string `json:"description"`
}

// Catalog is the list of subscribable events.
var Catalog = []EventInfo{
	{EventMessageIncoming, "A new message is received from a contact"},
	{EventMessageSent, "An agent sends a message"},
	{EventMessageOutgoing, "A message is sent to a contact (includes echoes)"},
	{EventContactCreated, "A new contact is created"},
	{EventContactOptedOut, "A contact is opted out of marketing messages (a keyword, the provider's 131050, or a user)"},
	{EventContactOptedIn, "A contact is opted back in to marketing messages (a keyword or a user)"},
	{EventTransferCreated, "A transfer to a human agent is requested"},
	{EventTransferAssigned, "A transfer is assigned to an agent"},
	{EventTransferResumed, "The chatbot is resumed and the transfer closed"},
}

func isKnownEvent(e string) bool {
	return slices.ContainsFunc(Catalog, func(i EventInfo) bool { return i.Event == e })
}

// Delivery rules from the spec.
const (
	MaxAttempts        = 3
	MaxConcurrent      = 10
	UserAgent          = "Wharf-Webhook/1.0"
	SignatureHeader    = "X-Webhook-Signature"
	deliveryTimeout    = 10 * time.Second
	keepDeliveries     = 100
	maxHeaders         = 20
	maxHeaderValueSize = 1024
)

// retryDelay is the wait before attempt n (2 and 3): about 2 s, then 4 s.
func retryDelay(nextAttempt int) time.Duration {
	return time.Duration(1<<(nextAttempt-1)) * time.Second
}

// Service manages webhooks and delivers events.
type Service struct {
	db      *gorm.DB
	box     *secrets.Box
	enq     *jobs.Enqueuer
	policy  safehttp.Policy
	client  *http.Client
	metrics *metrics.Set
	log     *slog.Logger
	now     func() time.Time
	// listeners caches the events each organization's webhooks subscribe
	// to (nil: read every time); see WithListenerCache.
	listeners *versioned.Cache[uuid.UUID, map[string]bool]
}

// Option changes a default of NewService.
type Option func(*Service)

// NewService wires the webhooks domain; m (nil: none) counts the
// deliveries by outcome.
func NewService(db *gorm.DB, box *secrets.Box, enq *jobs.Enqueuer, policy safehttp.Policy, m *metrics.Set, log *slog.Logger, opts ...Option) *Service {
	s := &Service{db: db, box: box, enq: enq, policy: policy, client: policy.Client(deliveryTimeout), metrics: m, log: log,
		now: func() time.Time { return time.Now().UTC() }}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Input creates or changes a webhook; nil fields are unchanged on update.
type Input struct {
	Name     *string
	URL      *string
	Events   *[]string
	Headers  *map[string]string
	Secret   *string // "" clears it
	IsActive *bool
}

// View is a webhook without its secret.
type View struct {
	models.Webhook
	HasSecret bool
}

func view(w models.Webhook) View { return View{Webhook: w, HasSecret: len(w.SecretEnc) > 0} }

// List returns the organization's webhooks.
func (s *Service) List(ctx context.Context, orgID uuid.UUID) ([]View, error) {
	var rows []models.Webhook
	if err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Order("created_at").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]View, len(rows))
	for i, w := range rows {
		out[i] = view(w)
	}
	return out, nil
}

// Get returns one webhook.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*View, error) {
	w, err := s.get(ctx, s.db, orgID, id)
	if err != nil {
		return nil, err
	}
	v := view(*w)
	return &v, nil
}

func (s *Service) get(ctx context.Context, db *gorm.DB, orgID, id uuid.UUID) (*models.Webhook, error) {
	return tenant.Get[models.Webhook](ctx, db, orgID, id, "webhook not found")
}

// Create adds a webhook.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in Input) (*View, error) {
	if in.Name == nil || in.URL == nil || in.Events == nil {
		return nil, apperr.Invalidf("name, url and events are required")
	}
	w := models.Webhook{OrganizationID: orgID, IsActive: true}
	if err := keepSecrets(&w, &in); err != nil {
		return nil, err
	}
	if err := s.applyInput(&w, in); err != nil {
		return nil, err
	}
	if err := s.db.WithContext(ctx).Create(&w).Error; err != nil {
		return nil, err
	}
	s.listenersChanged(ctx, orgID)
	v := view(w)
	return &v, nil
}

// Update changes a webhook.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*View, error) {
	w, err := s.get(ctx, s.db, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := keepSecrets(w, &in); err != nil {
		return nil, err
	}
	if err := s.applyInput(w, in); err != nil {
		return nil, err
	}
	w.UpdatedAt = s.now()
	if err := s.db.WithContext(ctx).Save(w).Error; err != nil {
		return nil, err
	}
	s.listenersChanged(ctx, orgID)
	v := view(*w)
	return &v, nil
}

// Delete removes a webhook and its delivery log.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.Webhook{}, "id = ?", id)
	s.listenersChanged(ctx, orgID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("webhook not found")
	}
	return nil
}

var headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")

// reservedHeaders are set by the delivery itself.
var reservedHeaders = []string{"content-type", "content-length", "host", "user-agent", "x-webhook-signature",
	"x-webhook-event", "x-webhook-id", "transfer-encoding", "connection"}

// applyInput validates in and sets its fields on w (nil fields unchanged).
func (s *Service) applyInput(w *models.Webhook, in Input) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || len([]rune(name)) > 100 {
			return apperr.Invalidf("name is required (at most 100 characters)")
		}
		w.Name = name
	}
	if in.URL != nil {
		u := strings.TrimSpace(*in.URL)
		if err := s.policy.ValidateURL(u); err != nil {
			return apperr.Invalidf("url: %s", safehttp.Public(err))
		}
		w.URL = u
	}
	if in.Events != nil {
		if len(*in.Events) == 0 {
			return apperr.Invalidf("events must name at least one event")
		}
		var evs []string
		for _, e := range *in.Events {
			if !isKnownEvent(e) {
				return apperr.Invalidf("unknown event %q (GET /api/webhooks lists available_events)", e)
			}
			if !slices.Contains(evs, e) {
				evs = append(evs, e)
			}
		}
		w.Events.V = evs
	}
	if in.Headers != nil {
		if len(*in.Headers) > maxHeaders {
			return apperr.Invalidf("at most %d custom headers", maxHeaders)
		}
		for k, v := range *in.Headers {
			if !headerName.MatchString(k) || strings.ContainsAny(v, "\r\n") || len(v) > maxHeaderValueSize {
				return apperr.Invalidf("header %q is not a valid HTTP header", k)
			}
			if slices.Contains(reservedHeaders, strings.ToLower(k)) {
				return apperr.Invalidf("header %q is set by the delivery and cannot be overridden", k)
			}
		}
		w.Headers.V = *in.Headers
	}
	if w.Headers.V == nil {
		w.Headers.V = map[string]string{}
	}
	if in.Secret != nil {
		if *in.Secret == "" {
			w.SecretEnc = nil
		} else {
			enc, err := s.box.SealString(*in.Secret)
			if err != nil {
				return err
			}
			w.SecretEnc = enc
		}
	}
	if in.IsActive != nil {
		w.IsActive = *in.IsActive
	}
	return nil
}

// Deliveries returns the last delivery attempts of a webhook, newest first.
func (s *Service) Deliveries(ctx context.Context, orgID, id uuid.UUID, limit int) ([]models.WebhookDelivery, error) {
	if _, err := s.get(ctx, s.db, orgID, id); err != nil {
		return nil, err
	}
	var out []models.WebhookDelivery
	err := s.db.WithContext(ctx).Where("webhook_id = ?", id).Order("id DESC").Limit(limit).Find(&out).Error
	return out, err
}
