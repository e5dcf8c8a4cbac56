package models

import (
	"time"

	"github.com/google/uuid"
)

// Custom action types.
const (
	ActionWebhook    = "webhook"
	ActionURL        = "url"
	ActionJavaScript = "javascript"
)

// CustomAction is a button of the conversation view that calls an
// organization's own system for a contact. Config holds the type's settings
// (internal/customactions validates and normalises it).
type CustomAction struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Name           string
	Icon           string
	ActionType     string
	Config         JSON[map[string]any] `gorm:"type:jsonb"`
	IsActive       bool
	DisplayOrder   int
	CreatedBy      *uuid.UUID `gorm:"type:uuid"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}
