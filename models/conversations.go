package models

import (
	"time"

	"github.com/google/uuid"
)

// Team is a group of agents that transfers can be routed to.
type Team struct {
	ID                 uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID     uuid.UUID `gorm:"type:uuid"`
	Name               string
	Description        string
	AssignmentStrategy string // round_robin, load_balanced, manual
	IsActive           bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Team member roles.
const (
	TeamRoleManager = "manager"
	TeamRoleAgent   = "agent"
)

// TeamMember is a member of the organization in a team.
type TeamMember struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	TeamID         uuid.UUID `gorm:"type:uuid"`
	UserID         uuid.UUID `gorm:"type:uuid"`
	Role           string
	LastAssignedAt *time.Time
	CreatedAt      time.Time
}

// CannedResponse is a saved reply agents insert into a conversation.
type CannedResponse struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Name           string
	Shortcut       string
	Content        string
	Category       string
	IsActive       bool
	UsageCount     int64
	CreatedBy      *uuid.UUID `gorm:"type:uuid"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Agent transfer statuses.
const (
	TransferActive  = "active"
	TransferResumed = "resumed"
)

// AgentTransfer hands a contact's conversation from the bot to a person:
// waiting in a queue (the general one when TeamID is nil) until an agent
// is assigned, active until resumed.
type AgentTransfer struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	ContactID      uuid.UUID `gorm:"type:uuid"`
	Status         string
	Source         string
	TeamID         *uuid.UUID `gorm:"type:uuid"`
	AgentID        *uuid.UUID `gorm:"type:uuid"`
	Notes          string
	CreatedBy      *uuid.UUID `gorm:"type:uuid"`
	TransferredAt  time.Time
	AssignedAt     *time.Time
	ResumedAt      *time.Time
	ResumedBy      *uuid.UUID `gorm:"type:uuid"`
	UpdatedAt      time.Time
}
