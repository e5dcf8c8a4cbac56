package transfers

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/live"
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

// outbox collects a change's events: the webhook outbox's ids and the
// event stream's events, both published after the commit.
type outbox struct {
	ids  []uuid.UUID
	live []live.Event
}

// publish publishes the events of a committed change (nil: none).
func (s *Service) publish(ctx context.Context, orgID uuid.UUID, ob *outbox) {
	if ob == nil {
		return
	}
	s.live.Publish(ctx, orgID, ob.live...)
	s.events.Publish(ctx, orgID, ob.ids...)
}

// LiveTransfer is the data of the event stream's transfer.* events (the
// contact, with its number, is the event's contact).
type LiveTransfer struct {
	TransferID uuid.UUID  `json:"transfer_id"`
	Status     string     `json:"status" enum:"active,resumed"`
	Source     string     `json:"source"`
	ContactID  uuid.UUID  `json:"contact_id"`
	TeamID     *uuid.UUID `json:"team_id"`
	TeamName   string     `json:"team_name,omitempty"`
	Notes      string     `json:"notes"`
	AgentID    *uuid.UUID `json:"agent_id"`
	AgentName  string     `json:"agent_name,omitempty"`
}

// emit writes an event about the transfer as it is now in tx into ob.
// The stream's audience is GET /api/chatbot/transfers's: transfers:read,
// and without transfers:assign the general queue, one's teams and one's
// own (visible).
func (s *Service) emit(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID, event string, ob *outbox) error {
	v, err := s.get(ctx, tx, orgID, id)
	if err != nil {
		return err
	}
	d := EventData{TransferID: v.ID, Status: v.Status, Source: v.Source, ContactID: v.ContactID, ContactName: v.ContactName,
		ContactPhone: v.PhoneNumber, TeamID: v.TeamID, TeamName: v.TeamName, Notes: v.Notes, AgentID: v.AgentID}
	if v.AgentID != nil {
		d.AgentName = v.AgentName
	}
	ob.live = append(ob.live, live.New(event, LiveTransfer{TransferID: v.ID, Status: v.Status, Source: v.Source, ContactID: v.ContactID,
		TeamID: v.TeamID, TeamName: v.TeamName, Notes: v.Notes, AgentID: v.AgentID, AgentName: d.AgentName},
		live.Audience{AnyPerm: []string{"transfers:read"}, TeamScoped: true, Team: v.TeamID, Agent: v.AgentID}).
		WithContact(live.Contact{ID: v.ContactID, PhoneNumber: v.PhoneNumber, Name: v.ContactName, AssignedTo: v.ContactAssignedTo}))
	hook, err := s.events.Emit(ctx, tx, orgID, event, d)
	ob.ids = append(ob.ids, hook)
	return err
}
