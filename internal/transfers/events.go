package transfers

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/webhooks"
)

const (
	eventCreated  = webhooks.EventTransferCreated
	eventAssigned = webhooks.EventTransferAssigned
	eventResumed  = webhooks.EventTransferResumed
)

// EventData is the data of the transfer.* events: the transfer, the
// contact, and the agent once assigned.
type EventData struct {
	TransferID   uuid.UUID  `json:"transfer_id"`
	Status       string     `json:"status"`
	Source       string     `json:"source"`
	ContactID    uuid.UUID  `json:"contact_id"`
	ContactName  string     `json:"contact_name"`
	ContactPhone string     `json:"contact_phone"`
	TeamID       *uuid.UUID `json:"team_id"`
	TeamName     string     `json:"team_name,omitempty"`
	Notes        string     `json:"notes"`
	AgentID      *uuid.UUID `json:"agent_id,omitempty"`
	AgentName    string     `json:"agent_name,omitempty"`
}

// emit writes an event about the transfer as it is now in tx.
func (s *Service) emit(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID, event string) (uuid.UUID, error) {
	v, err := s.get(ctx, tx, orgID, id)
	if err != nil {
		return uuid.Nil, err
	}
	d := EventData{TransferID: v.ID, Status: v.Status, Source: v.Source, ContactID: v.ContactID, ContactName: v.ContactName,
		ContactPhone: v.PhoneNumber, TeamID: v.TeamID, TeamName: v.TeamName, Notes: v.Notes, AgentID: v.AgentID}
	if v.AgentID != nil {
		d.AgentName = v.AgentName
	}
	return s.events.Emit(ctx, tx, orgID, event, d)
}
