package calling

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/apperr"
)

// Caller is the authenticated user a control request comes from.
type Caller struct {
	OrgID  uuid.UUID
	UserID uuid.UUID
}

// TransferInput is POST /api/call-transfers/initiate.
type TransferInput struct {
	CallLogID uuid.UUID
	TeamID    uuid.UUID
	AgentID   *uuid.UUID
}

// OutgoingInput is POST /api/calls/outgoing.
type OutgoingInput struct {
	ContactID       uuid.UUID
	PlatformAccount string
	SDPOffer        string
}

// errNotBuilt marks the control operations while they are being built.
// TODO(issue 13): replaced by the routing to the owning callbridge.
var errNotBuilt = apperr.Unavailablef("call control is not available yet")

// Connect bridges the agent's browser to a waiting transfer's call and
// answers the agent's SDP offer.
func (s *Service) Connect(ctx context.Context, c Caller, transferID uuid.UUID, sdpOffer string) (string, error) {
	return "", errNotBuilt
}

// HangupTransfer ends the whole call of a transfer (the agent hangs up).
func (s *Service) HangupTransfer(ctx context.Context, c Caller, transferID uuid.UUID) error {
	return errNotBuilt
}

// Hold puts a call on hold: the caller hears hold music.
func (s *Service) Hold(ctx context.Context, c Caller, callLogID uuid.UUID) error { return errNotBuilt }

// Resume restores the bridge of a call on hold.
func (s *Service) Resume(ctx context.Context, c Caller, callLogID uuid.UUID) error { return errNotBuilt }

// InitiateTransfer moves a call to a team.
func (s *Service) InitiateTransfer(ctx context.Context, c Caller, in TransferInput) error { return errNotBuilt }

// Outgoing places a business-initiated call and answers the agent's offer
// once the callee picks up.
func (s *Service) Outgoing(ctx context.Context, c Caller, in OutgoingInput) (uuid.UUID, string, error) {
	return uuid.Nil, "", errNotBuilt
}

// HangupOutgoing ends an outgoing call.
func (s *Service) HangupOutgoing(ctx context.Context, c Caller, callLogID uuid.UUID) error {
	return errNotBuilt
}
