package models

import (
	"time"

	"github.com/google/uuid"
)

// CampaignStatus is a campaign's state (internal/campaigns's state
// machine moves it).
type CampaignStatus string

// Campaign statuses.
const (
	CampaignDraft     CampaignStatus = "draft"
	CampaignScheduled CampaignStatus = "scheduled"
	CampaignSending   CampaignStatus = "sending"
	CampaignPaused    CampaignStatus = "paused"
	CampaignCompleted CampaignStatus = "completed"
	CampaignCancelled CampaignStatus = "cancelled"
	// CampaignRecurring: a series whose occurrences are still to come
	// (internal/campaigns, recurrence.go); it sends nothing itself.
	CampaignRecurring CampaignStatus = "recurring"
)

// Recurrence is a recurring campaign's schedule: a 5-field cron
// expression in the organization's timezone, an end (EndsAt, MaxRuns or
// both), and how late a missed occurrence may still run.
type Recurrence struct {
	Cron         string     `json:"cron"`
	EndsAt       *time.Time `json:"ends_at"`
	MaxRuns      *int       `json:"max_runs"`
	GraceMinutes int        `json:"grace_minutes"`
}

// RecipientStatus is a campaign recipient's status: the message statuses,
// and besides, a recipient is claimed as sending just before its send, and
// is unknown when a crash left the outcome of its send undecided. Statuses
// move forward only after the send; the order is internal/statuses's.
type RecipientStatus string

// Recipient statuses.
const (
	RecipientPending   RecipientStatus = "pending"
	RecipientSending   RecipientStatus = "sending"
	RecipientSent      RecipientStatus = "sent"
	RecipientDelivered RecipientStatus = "delivered"
	RecipientRead      RecipientStatus = "read"
	RecipientFailed    RecipientStatus = "failed"
	RecipientUnknown   RecipientStatus = "unknown"
	// RecipientSkipped: not sent on purpose (a marketing template to a
	// contact who opted out of marketing); final, counted apart from failed.
	RecipientSkipped RecipientStatus = "skipped"
)

// Campaign is a bulk template send to imported recipients.
type Campaign struct {
	ID              uuid.UUID  `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID  uuid.UUID  `gorm:"type:uuid"`
	AccountID       *uuid.UUID `gorm:"type:uuid"`
	TemplateID      *uuid.UUID `gorm:"type:uuid"`
	TemplateName    string
	Name            string
	Status          CampaignStatus
	VariableMapping JSON[map[string]string] `gorm:"type:jsonb"`
	// Audience: the recipients come from the organization's contacts
	// (nil: they are uploaded), resolved once when the campaign starts, at
	// AudienceResolvedAt.
	Audience           JSON[*CampaignAudience] `gorm:"type:jsonb"`
	AudienceResolvedAt *time.Time
	ScheduledAt        *time.Time
	StartedAt          *time.Time
	PausedAt           *time.Time
	// PauseReason says why the system paused the campaign ("" when an
	// admin paused it).
	PauseReason     string
	CompletedAt     *time.Time
	CancelledAt     *time.Time
	RunGeneration   int
	TotalRecipients int
	SentCount       int
	DeliveredCount  int
	ReadCount       int
	FailedCount     int
	UnknownCount    int
	SkippedCount    int
	PendingCount    int
	SendingCount    int
	CountedAt       *time.Time
	// RepliedCount: recipients who answered within 72 hours of their
	// send, as counted at RepliesCountedAt (internal/campaigns, report.go).
	RepliedCount     int
	RepliesCountedAt *time.Time
	CreatedBy        *uuid.UUID `gorm:"type:uuid"`
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// Recurrence makes the campaign a series (nil: a single send); the
	// series fires its next occurrence at NextRunAt, has fired Runs, and
	// skipped SkippedOccurrences (missed past their grace, or superseded
	// by a later missed one), the last at LastSkippedAt.
	Recurrence         JSON[*Recurrence] `gorm:"type:jsonb"`
	NextRunAt          *time.Time
	Runs               int
	SkippedOccurrences int
	LastSkippedAt      *time.Time
	// SeriesID and OccurrenceAt: this campaign is the run of a series'
	// occurrence (unique together).
	SeriesID     *uuid.UUID `gorm:"type:uuid"`
	OccurrenceAt *time.Time
	// Projected: a framework document projects this campaign (a Platform
	// Bulk Message, internal/integration/bulk): its changes record
	// campaign.changed in the events outbox. Set at the launch, never
	// changed.
	Projected bool
}

// CampaignRecipient is one recipient of a campaign.
type CampaignRecipient struct {
	ID                uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	Seq               int64     `gorm:"->"` // assigned by the database
	CampaignID        uuid.UUID `gorm:"type:uuid"`
	OrganizationID    uuid.UUID `gorm:"type:uuid"`
	PhoneNumber       string
	Name              string
	Data              JSON[map[string]any] `gorm:"type:jsonb"`
	Status            RecipientStatus
	PlatformMessageID *string
	// Attempts counts real send failures (provider trouble), never
	// throttles or waits; a recipient fails after maxAttempts of them.
	Attempts      int
	ClaimID       *uuid.UUID `gorm:"type:uuid"`
	SendStartedAt *time.Time
	SentAt        *time.Time
	DeliveredAt   *time.Time
	ReadAt        *time.Time
	FailedAt      *time.Time
	ErrorCode     *int
	ErrorTitle    string
	ErrorDetail   string
	// RepliedAt: the recipient's first message within 72 hours after
	// SentAt; not a column: read by the report's queries only.
	RepliedAt *time.Time `gorm:"->;-:migration"`
	CreatedAt time.Time
	UpdatedAt time.Time
}
