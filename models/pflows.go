package models

import (
	"time"

	"github.com/google/uuid"
)

// Platform flow statuses. DRAFT, PUBLISHED and DEPRECATED are moved here;
// BLOCKED and THROTTLED are set by the provider and arrive by sync.
const (
	FlowDraft      = "DRAFT"
	FlowPublished  = "PUBLISHED"
	FlowDeprecated = "DEPRECATED"
	FlowBlocked    = "BLOCKED"
	FlowThrottled  = "THROTTLED"
)

// PlatformFlow is a platform-native flow: a form the provider renders in the
// chat, defined by its flow JSON.
type PlatformFlow struct {
	ID               uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID   uuid.UUID `gorm:"type:uuid"`
	AccountID        uuid.UUID `gorm:"type:uuid"`
	ProviderFlowID   *string
	Name             string
	Status           string
	Categories       JSON[[]string]         `gorm:"type:jsonb"`
	JSONDefinition   JSON[map[string]any]   `gorm:"type:jsonb;column:json_definition"`
	ValidationErrors JSON[[]map[string]any] `gorm:"type:jsonb"`
	NeedsSave        bool
	SavedAt          *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}
