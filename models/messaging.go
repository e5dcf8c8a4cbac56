package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// JSON stores a Go value in a jsonb column.
type JSON[T any] struct {
	V T
}

// Value implements driver.Valuer.
func (j JSON[T]) Value() (driver.Value, error) {
	b, err := json.Marshal(j.V)
	return string(b), err
}

// Scan implements sql.Scanner.
func (j *JSON[T]) Scan(src any) error {
	var zero T
	j.V = zero
	switch v := src.(type) {
	case nil:
		return nil
	case []byte:
		return json.Unmarshal(v, &j.V)
	case string:
		return json.Unmarshal([]byte(v), &j.V)
	}
	return fmt.Errorf("models.JSON: cannot scan %T", src)
}

// MarshalJSON renders the wrapped value.
func (j JSON[T]) MarshalJSON() ([]byte, error) { return json.Marshal(j.V) }

// Account statuses.
const (
	AccountPending             = "pending"
	AccountActive              = "active"
	AccountDisconnected        = "disconnected"
	AccountSuspended           = "suspended"
	AccountPendingRegistration = "pending_registration"
)

// PlatformAccount is a connected business phone number.
type PlatformAccount struct {
	ID                 uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID     uuid.UUID `gorm:"type:uuid"`
	Name               string
	PhoneNumber        string
	PhoneNumberID      string
	BusinessAccountID  string
	AccessTokenEnc     []byte
	PinEnc             []byte
	WebhookVerifyToken string
	Status             string
	VerifiedName       string
	QualityRating      string
	MessagingLimit     string
	PlatformType       string
	IsCoexistence      bool
	LastError          string
	// MessagingTierOverride paces campaigns instead of MessagingLimit.
	MessagingTierOverride string
	CreatedAt             time.Time
	UpdatedAt             time.Time

	// VerifiedAt is when the provider first accepted the account's token for
	// its number: a verified account owns the number (at most one per
	// number); an unverified one is only a claim.
	VerifiedAt *time.Time
}

// Contact is a person the organization talks to.
type Contact struct {
	ID             uuid.UUID  `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID  `gorm:"type:uuid"`
	AccountID      *uuid.UUID `gorm:"type:uuid"`
	PhoneNumber    string
	Name           string
	ProfileName    string
	AvatarURL      string
	AssignedTo     *uuid.UUID           `gorm:"type:uuid"`
	Metadata       JSON[map[string]any] `gorm:"type:jsonb"`
	LastMessageAt  *time.Time
	LastInboundAt  *time.Time
	// The inbox's columns (migration 00027), kept where messages are
	// stored: incoming messages since the conversation was last marked
	// read, and the last message's preview (messaging.Preview) and
	// direction.
	UnreadCount          int
	LastMessagePreview   string
	LastMessageDirection string
	// MarketingOptOut: the contact is not sent marketing templates
	// (internal/contacts, optout.go). The other opt-out fields record its
	// last change: OptedOutAt while opted out, the source (OptOutKeyword,
	// OptOutProvider, OptOutUser), when, and the user of a user's change.
	MarketingOptOut bool
	OptedOutAt      *time.Time
	OptOutSource    string
	OptOutChangedAt *time.Time
	OptOutChangedBy *uuid.UUID `gorm:"type:uuid"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// How a contact's marketing opt-out last changed.
const (
	OptOutKeyword  = "keyword"  // the contact sent an opt-out or opt-in keyword
	OptOutProvider = "provider" // the provider refused a marketing template with 131050
	OptOutUser     = "user"     // a user changed it through the API
)

// Tag labels contacts.
type Tag struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Name           string
	Color          string
	Description    string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ContactTag links a contact and a tag.
type ContactTag struct {
	ContactID uuid.UUID `gorm:"type:uuid;primaryKey"`
	TagID     uuid.UUID `gorm:"type:uuid;primaryKey"`
}

// Template statuses.
const (
	TemplateApproved = "APPROVED"
	TemplatePending  = "PENDING"
	TemplateRejected = "REJECTED"
)

// Template is a message template of an account.
type Template struct {
	ID                 uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID     uuid.UUID `gorm:"type:uuid"`
	AccountID          uuid.UUID `gorm:"type:uuid"`
	ProviderTemplateID string
	Name               string
	Language           string
	Category           string
	Status             string
	ParameterFormat    string
	Components         JSON[[]map[string]any] `gorm:"type:jsonb"`
	SampleValues       JSON[[]map[string]any] `gorm:"type:jsonb"`
	RejectedReason     string
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Message directions.
const (
	DirectionIncoming = "incoming"
	DirectionOutgoing = "outgoing"
)

// MessageStatus is a message's delivery status. Rows move forward only;
// the order is internal/statuses's (order.go), its one place.
type MessageStatus string

// Message statuses.
const (
	StatusPending   MessageStatus = "pending"
	StatusSent      MessageStatus = "sent"
	StatusDelivered MessageStatus = "delivered"
	StatusRead      MessageStatus = "read"
	StatusFailed    MessageStatus = "failed"
)

// Message is one message of a conversation.
type Message struct {
	ID                uuid.UUID  `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID    uuid.UUID  `gorm:"type:uuid"`
	ContactID         uuid.UUID  `gorm:"type:uuid"`
	AccountID         *uuid.UUID `gorm:"type:uuid"`
	PlatformMessageID *string
	Direction         string
	Type              string
	Content           JSON[map[string]any] `gorm:"type:jsonb"`
	Status            MessageStatus
	ErrorCode         *int
	ErrorTitle        string
	ErrorDetail       string
	TemplateName      string
	// TemplateID is the template of a template send (queued sends read it;
	// content keeps a copy for the API).
	TemplateID *uuid.UUID `gorm:"type:uuid"`
	// Projected: a framework document projects this message (an Outgoing
	// Platform Message); its changes record message.changed in the events
	// outbox, from which the projector updates the document.
	Projected     bool
	SentBy        *uuid.UUID `gorm:"type:uuid"`
	APIKeyID      *uuid.UUID `gorm:"type:uuid"`
	SendStartedAt *time.Time
	// SendAttempts counts the claims of a queued send (each may reach the
	// provider); a rate-limit wait gives its claim back. A transient error
	// fails the message once it reaches jobs.MessageSendAttempts.
	SendAttempts int
	OccurredAt   time.Time
	SentAt       *time.Time
	DeliveredAt  *time.Time
	ReadAt       *time.Time
	FailedAt     *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time

	// Media kept in our storage (received media fetched from the provider,
	// uploaded media sent): MediaStatus is nil for messages without media.
	MediaStatus   *string
	MediaKey      string
	MediaMimeType string
	MediaSize     int64
	MediaFilename string
	MediaError    string
}

// Media statuses of a message.
const (
	MediaPending     = "pending"
	MediaStored      = "stored"
	MediaUnavailable = "unavailable"
)

// MediaUpload is a file uploaded for sending (POST /api/media).
type MediaUpload struct {
	ID             uuid.UUID  `gorm:"type:uuid;primaryKey"`
	OrganizationID uuid.UUID  `gorm:"type:uuid"`
	UploadedBy     *uuid.UUID `gorm:"type:uuid"`
	Kind           string
	MimeType       string
	Filename       string
	Size           int64
	SHA256         string `gorm:"column:sha256"`
	StorageKey     string
	CreatedAt      time.Time
}

// InboundEvent is a verified provider webhook waiting to be applied.
type InboundEvent struct {
	ID             int64     `gorm:"primaryKey"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	AccountID      uuid.UUID `gorm:"type:uuid"`
	ContactKey     string
	// EventType is inbound.EventMessages, EventStatuses, EventTemplateStatus.
	EventType   string `gorm:"column:kind"`
	Payload     []byte `gorm:"type:jsonb"`
	ReceivedAt  time.Time
	ProcessedAt *time.Time
	Attempts    int
	LastError   string
}

// Event is an outbound webhook event in the outbox.
type Event struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Event          string
	Data           []byte `gorm:"type:jsonb"`
	CreatedAt      time.Time
	DispatchedAt   *time.Time
}

// Webhook is an organization's endpoint for events.
type Webhook struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Name           string
	URL            string
	Events         JSON[[]string]          `gorm:"type:jsonb"`
	Headers        JSON[map[string]string] `gorm:"type:jsonb"`
	SecretEnc      []byte
	IsActive       bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// WebhookDelivery is one delivery attempt.
type WebhookDelivery struct {
	ID             int64      `gorm:"primaryKey"`
	OrganizationID uuid.UUID  `gorm:"type:uuid"`
	WebhookID      uuid.UUID  `gorm:"type:uuid"`
	EventID        *uuid.UUID `gorm:"type:uuid"`
	Event          string
	Attempt        int
	Success        bool
	StatusCode     int
	Error          string
	DurationMS     int `gorm:"column:duration_ms"`
	// RequestBody and ResponseBody are what was sent and the start of the
	// endpoint's answer, clipped (internal/webhooks).
	RequestBody  string
	ResponseBody string
	// Redelivery: a person asked for this attempt (POST .../redeliver).
	Redelivery bool
	CreatedAt  time.Time
}

// ContactNote is a private note of the organization's users on a contact.
type ContactNote struct {
	ID             uuid.UUID  `gorm:"type:uuid;primaryKey"`
	OrganizationID uuid.UUID  `gorm:"type:uuid"`
	ContactID      uuid.UUID  `gorm:"type:uuid"`
	AuthorID       *uuid.UUID `gorm:"type:uuid"`
	Body           string
	CreatedAt      time.Time
}
