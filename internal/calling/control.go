package calling

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
	"wharf/platform"
)

// The api side of call control: every id is looked up inside the caller's
// organization (404 otherwise) and the request's preconditions are checked
// before anything is sent, then the request goes to the callbridge that
// owns the call, which makes the change (the database decides races).

// Caller is the authenticated user a control request comes from.
type Caller struct {
	OrgID  uuid.UUID
	UserID uuid.UUID
	// Supervisor may control any call of the organization (hold, resume,
	// transfer, hang up); other users only the calls they are on.
	Supervisor bool
}

// mayControl refuses a user who is neither on the call nor a supervisor:
// an agent cannot hang up or hold a colleague's call.
func (c Caller) mayControl(l *models.CallLog, what string) error {
	if c.Supervisor || (l.AgentID != nil && *l.AgentID == c.UserID) {
		return nil
	}
	return apperr.Forbiddenf("only the agent on the call or a supervisor (transfers:assign) can %s it", what)
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

// CheckSDPOffer refuses what cannot be an SDP offer with audio before any
// lookup: a 400 that changes nothing.
func CheckSDPOffer(sdp string) error {
	s := strings.TrimSpace(sdp)
	if s == "" {
		return apperr.Invalidf("sdp_offer is required (the browser's SDP offer)")
	}
	if !strings.HasPrefix(s, "v=0") || !strings.Contains(s, "\nm=audio") {
		return apperr.Invalidf("sdp_offer is not an SDP offer with audio: it must start with v=0 and have an m=audio line")
	}
	return nil
}

// callLog reads a call log of the organization.
func (s *Service) callLog(ctx context.Context, orgID, id uuid.UUID) (*models.CallLog, error) {
	var l models.CallLog
	if err := s.db.WithContext(ctx).Where("id = ? AND organization_id = ?", id, orgID).Take(&l).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.NotFoundf("call log not found")
		}
		return nil, err
	}
	return &l, nil
}

// callTransfer reads a call transfer of the organization.
func (s *Service) callTransfer(ctx context.Context, orgID, id uuid.UUID) (*models.CallTransfer, error) {
	var t models.CallTransfer
	if err := s.db.WithContext(ctx).Where("id = ? AND organization_id = ?", id, orgID).Take(&t).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.NotFoundf("call transfer not found")
		}
		return nil, err
	}
	return &t, nil
}

var errEnded = apperr.Conflictf("the call has ended")

// control sends a request to the owner of the call and waits for its reply.
// A call whose owner is gone is ended (the provider is told) and logged.
func (s *Service) control(ctx context.Context, r *Request) (*Reply, error) {
	owner, err := s.owner(ctx, r.CallLogID)
	if err != nil {
		return nil, err
	}
	if owner == "" {
		s.endOrphan(ctx, r.OrgID, r.CallLogID, "terminate")
		return nil, apperr.Conflictf("the call has ended: the callbridge that carried it stopped")
	}
	rep, err := s.call(ctx, instanceQueue(owner), r, s.cfg.ControlTimeout)
	if err != nil {
		return nil, err
	}
	return rep, rep.Err()
}

// endOrphan ends a call no callbridge carries: the provider is told
// (terminate, or reject for a call never answered) and the log ends as
// failed, by the system.
func (s *Service) endOrphan(ctx context.Context, orgID, callLogID uuid.UUID, action string) {
	st, err := s.LoadSetup(ctx, orgID, callLogID)
	if err != nil || st.Log.EndedAt != nil {
		return
	}
	cr := platform.Creds{AccessToken: st.Account.AccessToken, PhoneNumberID: st.Account.PhoneNumberID}
	if err := s.provider.CallAction(ctx, cr, st.Log.PlatformCallID, action, nil); err != nil {
		s.log.Warn("calling: ending an orphaned call at the provider", "call_log_id", callLogID, "error", err)
	}
	if _, err := s.Finish(ctx, orgID, callLogID, End{By: BySystem, Status: models.CallFailed}); err != nil {
		s.log.Error("calling: ending an orphaned call", "call_log_id", callLogID, "error", err)
	}
}

// Connect bridges the agent's browser to a waiting transfer's call and
// answers the agent's SDP offer. The first connect wins; a second one is a
// 409 that changes nothing.
func (s *Service) Connect(ctx context.Context, c Caller, transferID uuid.UUID, sdpOffer string) (string, error) {
	if err := CheckSDPOffer(sdpOffer); err != nil {
		return "", err
	}
	t, err := s.callTransfer(ctx, c.OrgID, transferID)
	if err != nil {
		return "", err
	}
	if t.Status != models.TransferWaiting {
		return "", apperr.Conflictf("the call transfer is %s, not waiting", t.Status)
	}
	if t.AgentID != nil && *t.AgentID != c.UserID {
		return "", apperr.Forbiddenf("this call transfer is assigned to another agent")
	}
	if err := s.mayTake(ctx, c, t); err != nil {
		return "", err
	}
	rep, err := s.control(ctx, &Request{Op: OpConnect, OrgID: c.OrgID, CallLogID: t.CallLogID, TransferID: t.ID, UserID: c.UserID, SDP: sdpOffer})
	if err != nil {
		return "", err
	}
	return rep.SDP, nil
}

// mayTake refuses a waiting call that is another team's: a transfer to a
// team is for its members (or the agent it is assigned to), and a
// supervisor (transfers:assign) may take any, as for conversation
// transfers' pickup. One without a team is for everyone.
func (s *Service) mayTake(ctx context.Context, c Caller, t *models.CallTransfer) error {
	if t.TeamID == nil || c.Supervisor || (t.AgentID != nil && *t.AgentID == c.UserID) {
		return nil
	}
	member, err := s.teams.IsTeamMember(ctx, c.OrgID, *t.TeamID, c.UserID)
	if err != nil && !apperr.Is(err, apperr.NotFound) { // no team: no member
		return err
	}
	if !member {
		return apperr.Forbiddenf("this call is waiting for another team: only its members or a supervisor (transfers:assign) can take it")
	}
	return nil
}

// HangupTransfer ends the whole call of a transfer (the agent hangs up).
func (s *Service) HangupTransfer(ctx context.Context, c Caller, transferID uuid.UUID) error {
	t, err := s.callTransfer(ctx, c.OrgID, transferID)
	if err != nil {
		return err
	}
	if t.Status != models.TransferWaiting && t.Status != models.TransferConnected {
		return apperr.Conflictf("the call transfer is %s", t.Status)
	}
	if !c.Supervisor && (t.AgentID == nil || *t.AgentID != c.UserID || t.Status != models.TransferConnected) {
		return apperr.Forbiddenf("only the agent connected to the call or a supervisor (transfers:assign) can hang it up")
	}
	_, err = s.control(ctx, &Request{Op: OpHangup, OrgID: c.OrgID, CallLogID: t.CallLogID, TransferID: t.ID, UserID: c.UserID})
	return err
}

// openCall reads a call log of the organization that has not ended.
func (s *Service) openCall(ctx context.Context, orgID, id uuid.UUID) (*models.CallLog, error) {
	l, err := s.callLog(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if l.EndedAt != nil {
		return nil, errEnded
	}
	return l, nil
}

// Hold puts a call on hold: the caller hears hold music, the agent's leg
// stays connected and nothing is forwarded.
func (s *Service) Hold(ctx context.Context, c Caller, callLogID uuid.UUID) error {
	l, err := s.openCall(ctx, c.OrgID, callLogID)
	if err != nil {
		return err
	}
	if err := c.mayControl(l, "hold"); err != nil {
		return err
	}
	if l.Status == models.CallOnHold {
		return apperr.Conflictf("the call is already on hold")
	}
	_, err = s.control(ctx, &Request{Op: OpHold, OrgID: c.OrgID, CallLogID: l.ID, UserID: c.UserID})
	return err
}

// Resume restores the bridge of a call on hold.
func (s *Service) Resume(ctx context.Context, c Caller, callLogID uuid.UUID) error {
	l, err := s.openCall(ctx, c.OrgID, callLogID)
	if err != nil {
		return err
	}
	if err := c.mayControl(l, "resume"); err != nil {
		return err
	}
	if l.Status != models.CallOnHold {
		return apperr.Conflictf("the call is not on hold")
	}
	_, err = s.control(ctx, &Request{Op: OpResume, OrgID: c.OrgID, CallLogID: l.ID, UserID: c.UserID})
	return err
}

// InitiateTransfer moves a call to a team: a new waiting transfer with the
// team (and the agent given, who must be a member, or the one the team's
// strategy picks); the caller hears ringback meanwhile.
func (s *Service) InitiateTransfer(ctx context.Context, c Caller, in TransferInput) error {
	l, err := s.openCall(ctx, c.OrgID, in.CallLogID)
	if err != nil {
		return err
	}
	if err := c.mayControl(l, "transfer"); err != nil {
		return err
	}
	agent := uuid.Nil // no agent: only the team's existence is checked
	if in.AgentID != nil {
		agent = *in.AgentID
	}
	member, err := s.teams.IsTeamMember(ctx, c.OrgID, in.TeamID, agent)
	if err != nil {
		return err
	}
	if in.AgentID != nil && !member {
		return apperr.Invalidf("agent_id must be a member of the team")
	}
	_, err = s.control(ctx, &Request{Op: OpTransfer, OrgID: c.OrgID, CallLogID: l.ID, UserID: c.UserID, TeamID: &in.TeamID, AgentID: in.AgentID})
	return err
}

// Outgoing places a business-initiated call to a contact through the named
// account and answers the agent's offer at once: the agent hears nothing
// until the callee picks up (the log goes initiating → ringing → accepted),
// then the legs are bridged. A contact without call permission is refused
// by the provider (138006): a 403 and no call left behind.
func (s *Service) Outgoing(ctx context.Context, c Caller, in OutgoingInput) (uuid.UUID, string, error) {
	if err := CheckSDPOffer(in.SDPOffer); err != nil {
		return uuid.Nil, "", err
	}
	contact, err := s.contacts.Contact(ctx, c.OrgID, in.ContactID)
	if err != nil {
		return uuid.Nil, "", err
	}
	acct, err := s.accounts.ByName(ctx, c.OrgID, in.PlatformAccount)
	if err != nil {
		return uuid.Nil, "", err
	}
	_, set, err := s.settings.Get(ctx, c.OrgID)
	if err != nil {
		return uuid.Nil, "", err
	}
	if !set.CallingEnabled {
		return uuid.Nil, "", apperr.Forbiddenf("calling is disabled for this organization (calling_enabled in the settings)")
	}
	alive, err := s.anyAlive(ctx)
	if err != nil {
		return uuid.Nil, "", err
	}
	if !alive {
		return uuid.Nil, "", errNoBridge
	}
	rep, err := s.call(ctx, anyQueue, &Request{Op: OpOutgoing, OrgID: c.OrgID, UserID: c.UserID, ContactID: &contact.ID,
		AccountID: &acct.ID, SDP: in.SDPOffer}, s.cfg.ControlTimeout)
	if err != nil {
		return uuid.Nil, "", err
	}
	if err := rep.Err(); err != nil {
		return uuid.Nil, "", err
	}
	return rep.CallLogID, rep.SDP, nil
}

// HangupOutgoing ends an outgoing call.
func (s *Service) HangupOutgoing(ctx context.Context, c Caller, callLogID uuid.UUID) error {
	l, err := s.callLog(ctx, c.OrgID, callLogID)
	if err != nil {
		return err
	}
	if l.Direction != "outgoing" {
		return apperr.NotFoundf("outgoing call not found")
	}
	if err := c.mayControl(l, "hang up"); err != nil {
		return err
	}
	if l.EndedAt != nil {
		return nil // already over: hanging up again is harmless
	}
	_, err = s.control(ctx, &Request{Op: OpHangup, OrgID: c.OrgID, CallLogID: l.ID, UserID: c.UserID})
	return err
}

// SweepEvery is how often callbridges look for calls whose owner died.
const SweepEvery = 10 * time.Second

// SweepOrphans ends the open calls whose callbridge is gone (its lease ran
// out): any callbridge runs it; Finish makes it idempotent.
func (s *Service) SweepOrphans(ctx context.Context) {
	open, err := s.OpenCalls(ctx)
	if err != nil {
		s.log.Warn("calling: orphan sweep", "error", err)
		return
	}
	for _, l := range open {
		if time.Since(l.UpdatedAt) < OwnerLease {
			continue // just created: its owner may not have claimed it yet
		}
		owner, err := s.owner(ctx, l.ID)
		if err != nil || owner != "" {
			continue
		}
		s.endOrphan(ctx, l.OrganizationID, l.ID, "terminate")
	}
}
