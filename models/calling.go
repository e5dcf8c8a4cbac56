package models

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Call log statuses (the spec's list).
const (
	CallRinging      = "ringing"
	CallAnswered     = "answered"
	CallCompleted    = "completed"
	CallMissed       = "missed"
	CallRejected     = "rejected"
	CallFailed       = "failed"
	CallTransferring = "transferring"
	CallInitiating   = "initiating"
	CallAccepted     = "accepted"
	CallOnHold       = "on_hold"
	CallConnected    = "connected"
)

// Call transfer statuses.
const (
	TransferWaiting   = "waiting"
	TransferConnected = "connected"
	TransferCompleted = "completed"
	TransferAbandoned = "abandoned"
	TransferNoAnswer  = "no_answer"
)

// CallLog is one voice call through an account.
type CallLog struct {
	ID                uuid.UUID  `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID    uuid.UUID  `gorm:"type:uuid"`
	AccountID         *uuid.UUID `gorm:"type:uuid"`
	PlatformAccount   string
	ContactID         *uuid.UUID `gorm:"type:uuid"`
	PlatformCallID    string
	CallerPhone       string
	Direction         string
	Status            string
	Duration          int
	IVRFlowID         *uuid.UUID      `gorm:"column:ivr_flow_id;type:uuid"`
	IVRPath           json.RawMessage `gorm:"column:ivr_path;type:jsonb;default:'[]'"`
	AgentID           *uuid.UUID      `gorm:"type:uuid"`
	StartedAt         time.Time
	AnsweredAt        *time.Time
	EndedAt           *time.Time
	DisconnectedBy    string
	HoldStartedAt     *time.Time
	RecordingKey      string
	RecordingDuration int
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// CallTransfer puts a call in front of an agent (or a team's agents).
type CallTransfer struct {
	ID                uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID    uuid.UUID `gorm:"type:uuid"`
	CallLogID         uuid.UUID `gorm:"type:uuid"`
	PlatformCallID    string
	CallerPhone       string
	ContactID         *uuid.UUID `gorm:"type:uuid"`
	PlatformAccount   string
	Status            string
	TeamID            *uuid.UUID `gorm:"type:uuid"`
	AgentID           *uuid.UUID `gorm:"type:uuid"`
	InitiatingAgentID *uuid.UUID `gorm:"type:uuid"`
	TransferredAt     time.Time
	ConnectedAt       *time.Time
	EndedAt           *time.Time
	HoldDuration      int
	TalkDuration      int
	CreatedAt         time.Time
	UpdatedAt         time.Time
}
