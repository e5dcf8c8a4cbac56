// Package messaging owns conversations: the messages of a contact, sending
// text, media, interactive and template messages through the provider, and
// applying the provider's statuses and incoming messages.
//
// Outbound sends follow one rule for crashes: a message is marked
// send_started_at before the provider is called; a send found started but
// unconfirmed is never repeated. Its outcome is learned from the provider's
// status webhooks, which echo our message id (biz_opaque_callback_data), or,
// when none arrives, it is marked failed by the sweeper.
//
// Every send leaves through the outbound.Sender, which paces it by the
// account's messaging tier and classifies the provider's answer; this
// package maps the outcome to its reply and stores it.
//
// Files: send.go (synchronous sends and what every send records), media.go
// (media by link), received.go (received media kept in our store), uploads.go
// (files uploaded for sending),
// queued.go (template sends queued for the worker), sweep.go (queued sends
// whose task was lost, sends whose outcome stayed unknown), read.go,
// incoming.go and statuses.go (the inbound consumer).
package messaging

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/live"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/statuses"
	"wharf/internal/infra/storage"
	"wharf/internal/infra/tenant"
	"wharf/internal/orgsettings"
	"wharf/internal/outbound"
	"wharf/internal/templates"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// ServiceWindow is how long after a contact's last message free-form
// messages may be sent.
const ServiceWindow = 24 * time.Hour

// Service sends and stores messages.
type Service struct {
	db        *gorm.DB
	accounts  *accounts.Service
	contacts  *contacts.Service
	templates *templates.Service
	webhooks  *webhooks.Service
	provider  *platform.Client
	sender    *outbound.Sender
	enq       *jobs.Enqueuer
	policy    safehttp.Policy
	media     *http.Client
	statuses  *statuses.Applier
	live      live.Publisher
	holders   Holders
	keywords  Keywords
	store     storage.Store
	log       *slog.Logger
	now       func() time.Time

	// claimSQL and claimBatchSQL are the send claims' statements, built
	// once from the models.
	claimSQLOnce  sync.Once
	claimSQL      string
	claimBatchSQL string
	claimErr      error

	// groups gathers concurrent template sends by number (queuegroup.go).
	groups sendGroups
}

// Deps are the collaborators of the messaging domain.
type Deps struct {
	DB        *gorm.DB
	Accounts  *accounts.Service
	Contacts  *contacts.Service
	Templates *templates.Service
	Webhooks  *webhooks.Service
	Provider  *platform.Client
	// Sender is the one way messages leave (internal/outbound), shared with
	// the other domains that send; nil: an unpaced one over Provider.
	Sender   *outbound.Sender
	Enqueuer *jobs.Enqueuer
	Policy   safehttp.Policy
	// Live publishes the event stream's message events (nil: none), and
	// Holders tells who holds a contact's transfer (nil: nobody), who
	// receives its messages' events without contacts:read.
	Live    live.Publisher
	Holders Holders
	// Keywords answers an organization's opt-out and opt-in keywords
	// (orgsettings.Service, cached there); nil: read in the inbound
	// transaction.
	Keywords Keywords
	// Store keeps media: received media fetched from the provider and
	// files uploaded for sending (nil: neither is kept).
	Store storage.Store
	Log   *slog.Logger
}

// Holders answers the agents holding the contacts' active transfers
// (transfers.Service).
type Holders interface {
	Holders(ctx context.Context, db *gorm.DB, orgID uuid.UUID, contactIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error)
}

// Keywords answers an organization's opt-out and opt-in keywords.
type Keywords interface {
	Keywords(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (orgsettings.Keywords, error)
}

// NewService wires the messaging domain.
func NewService(d Deps) *Service {
	if d.Sender == nil {
		od := outbound.Deps{Provider: d.Provider, Accounts: d.Accounts, Log: d.Log}
		if d.Contacts != nil {
			od.OptOuts = d.Contacts
		}
		d.Sender = outbound.New(od)
	}
	return &Service{sender: d.Sender, db: d.DB, accounts: d.Accounts, contacts: d.Contacts, templates: d.Templates, webhooks: d.Webhooks,
		provider: d.Provider, enq: d.Enqueuer, policy: d.Policy, media: d.Policy.Client(15 * time.Second),
		statuses: statuses.NewApplier(messageStatuses), live: live.Or(d.Live), holders: d.Holders, keywords: d.Keywords, store: d.Store, log: d.Log,
		now: func() time.Time { return time.Now().UTC() }}
}

// ConsumerName implements inbound.Consumer: messaging stores incoming
// messages (ConsumeMessage) and applies the statuses of its sends
// (ApplyStatuses).
func (s *Service) ConsumerName() string { return "messaging" }

// Actor is who sends: a user, possibly through one of their API keys.
type Actor struct {
	UserID   uuid.UUID
	APIKeyID *uuid.UUID
}

// List returns a contact's messages in chronological order. With before
// (or after) it returns the limit messages just before (or after) that
// message; otherwise page 1 holds the newest limit messages, page 2 the ones
// before them, and so on.
func (s *Service) List(ctx context.Context, orgID, contactID uuid.UUID, pg paging.Params, before, after *uuid.UUID) ([]models.Message, int64, error) {
	if _, err := s.contacts.Contact(ctx, orgID, contactID); err != nil {
		return nil, 0, err
	}
	base := s.db.WithContext(ctx).Model(&models.Message{}).Scopes(tenant.Scope(orgID)).Where("contact_id = ?", contactID)
	var total int64
	if err := base.Count(&total).Error; err != nil {
		return nil, 0, err
	}
	cursor := func(id uuid.UUID) (*models.Message, error) {
		var m models.Message
		err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("contact_id = ?", contactID).Take(&m, "id = ?", id).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.Invalidf("the cursor message is not a message of this contact")
		}
		return &m, err
	}
	q := base.Session(&gorm.Session{})
	var out []models.Message
	switch {
	case before != nil:
		m, err := cursor(*before)
		if err != nil {
			return nil, 0, err
		}
		err = q.Where("(occurred_at, created_at, id) < (?, ?, ?)", m.OccurredAt, m.CreatedAt, m.ID).
			Order("occurred_at DESC, created_at DESC, id DESC").Limit(pg.Limit).Find(&out).Error
		reverse(out)
		return out, total, err
	case after != nil:
		m, err := cursor(*after)
		if err != nil {
			return nil, 0, err
		}
		err = q.Where("(occurred_at, created_at, id) > (?, ?, ?)", m.OccurredAt, m.CreatedAt, m.ID).
			Order("occurred_at, created_at, id").Limit(pg.Limit).Find(&out).Error
		return out, total, err
	}
	err := q.Order("occurred_at DESC, created_at DESC, id DESC").Limit(pg.Limit).Offset(pg.Offset()).Find(&out).Error
	reverse(out)
	return out, total, err
}

func reverse(ms []models.Message) {
	for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
		ms[i], ms[j] = ms[j], ms[i]
	}
}

// Get returns one message.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*models.Message, error) {
	return tenant.Get[models.Message](ctx, s.db, orgID, id, "message not found")
}

// EventData is the data of message.incoming, message.sent and
// message.outgoing.
type EventData struct {
	MessageID       uuid.UUID      `json:"message_id"`
	ContactID       uuid.UUID      `json:"contact_id"`
	ContactPhone    string         `json:"contact_phone"`
	ContactName     string         `json:"contact_name"`
	MessageType     string         `json:"message_type"`
	Content         map[string]any `json:"content"`
	PlatformAccount string         `json:"platform_account"`
}

func eventData(m *models.Message, c *models.Contact, accountName string) EventData {
	name := c.Name
	if name == "" {
		name = c.ProfileName
	}
	return EventData{MessageID: m.ID, ContactID: c.ID, ContactPhone: c.PhoneNumber, ContactName: name,
		MessageType: m.Type, Content: m.Content.V, PlatformAccount: accountName}
}
