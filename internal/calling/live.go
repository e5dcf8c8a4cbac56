package calling

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/infra/live"
	"wharf/models"
)

// LiveCall is the data of the event stream's call.* events (the caller's
// number is the event's contact, masked by the stream).
type LiveCall struct {
	CallLogID      uuid.UUID  `json:"call_log_id"`
	CallTransferID *uuid.UUID `json:"call_transfer_id"`
	Status         string     `json:"status" description:"the transfer's status (ringing, answered) or the call log's (ended)"`
	TeamID         *uuid.UUID `json:"team_id"`
	AgentID        *uuid.UUID `json:"agent_id"`
}

func callContact(contactID *uuid.UUID, phone string) live.Contact {
	c := live.Contact{PhoneNumber: phone}
	if contactID != nil {
		c.ID = *contactID
	}
	return c
}

// announceTransfer publishes call.ringing (a transfer waits) or
// call.answered (an agent connected) for t. Its audience is who may take
// it (mayTake): call_transfers:read, and without transfers:assign only
// the team's members, the agent it is meant for, or everyone when it has
// no team.
func (s *Service) announceTransfer(ctx context.Context, typ string, t *models.CallTransfer) {
	id := t.ID
	s.live.Publish(ctx, t.OrganizationID, live.New(typ, LiveCall{CallLogID: t.CallLogID, CallTransferID: &id, Status: t.Status,
		TeamID: t.TeamID, AgentID: t.AgentID},
		live.Audience{AnyPerm: []string{"call_transfers:read"}, TeamScoped: true, Team: t.TeamID, Agent: t.AgentID}).
		WithContact(callContact(t.ContactID, t.CallerPhone)))
}

// announceEnd publishes call.ended, to the readers of call logs (GET
// /api/call-logs).
func (s *Service) announceEnd(ctx context.Context, orgID, callLogID uuid.UUID) {
	if _, none := s.live.(live.Discard); none {
		return // no stream to tell: spare the read
	}
	var l models.CallLog
	if err := s.db.WithContext(ctx).Select("id", "status", "contact_id", "caller_phone", "agent_id").
		Take(&l, "id = ? AND organization_id = ?", callLogID, orgID).Error; err != nil {
		s.log.Debug("cannot read an ended call for its live event", "call_log_id", callLogID, "error", err)
		return
	}
	s.live.Publish(ctx, orgID, live.New(live.CallEnded, LiveCall{CallLogID: l.ID, Status: l.Status, AgentID: l.AgentID},
		live.Audience{AnyPerm: []string{"call_logs:read"}}).WithContact(callContact(l.ContactID, l.CallerPhone)))
}
