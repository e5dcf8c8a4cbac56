package callbridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/models"
	"wharf/platform"
)

// codeNoPermission is the provider's refusal of a call the callee has not
// permitted.
const codeNoPermission = 138006

// placeOutgoing offers a call to the platform and answers the agent's
// offer at once; the callee's answer arrives by webhook (remoteAnswer) and
// the legs are bridged then. The call ends by itself when nobody picks up
// within the calling configuration's outgoing wait.
func (s *Server) placeOutgoing(ctx context.Context, r *calling.Request) (string, uuid.UUID, error) {
	if r.ContactID == nil || r.AccountID == nil {
		return "", uuid.Nil, apperr.Invalidf("contact_id and platform_account are required")
	}
	o, err := s.Calls.LoadOutgoing(ctx, r.OrgID, *r.ContactID, *r.AccountID)
	if err != nil {
		return "", uuid.Nil, err
	}
	ss := s.newSession(ctx, r.OrgID, uuid.Nil, "", o.Settings.Account, o.Settings.Settings)
	offer, err := ss.call.OfferPlatform(ctx)
	if err != nil {
		ss.call.Close()
		return "", uuid.Nil, fmt.Errorf("offering the call: %w", err)
	}
	callID, err := s.Provider.Connect(ctx, ss.creds, o.To, platform.CallSession{SDPType: "offer", SDP: offer})
	if err != nil {
		ss.call.Close()
		var pe *platform.Error
		if errors.As(err, &pe) && pe.Code == codeNoPermission {
			return "", uuid.Nil, apperr.Forbiddenf("the contact has not given this number permission to call them: " +
				"send a call permission request first (POST /api/calls/permission-request)")
		}
		if errors.As(err, &pe) && pe.Class == platform.Permanent {
			return "", uuid.Nil, apperr.Invalidf("the provider refused the call: %s", pe.Message)
		}
		return "", uuid.Nil, &apperr.Error{Kind: apperr.Upstream, Message: "the provider could not place the call", Err: err}
	}
	ss.callID = callID
	l, err := s.Calls.CreateOutgoing(ctx, r.OrgID, r.UserID, o, callID)
	if err != nil {
		ss.call.Close()
		ss.tellProvider("terminate")
		return "", uuid.Nil, err
	}
	ss.callLogID = l.ID
	if err := s.Bridge.Own(ctx, l.ID); err != nil {
		ss.end(calling.End{By: calling.BySystem, Status: models.CallFailed}, true)
		return "", uuid.Nil, err
	}
	answer, err := ss.call.AnswerAgent(ctx, r.SDP)
	if err != nil {
		ss.end(calling.End{By: calling.BySystem, Status: models.CallFailed}, true)
		return "", uuid.Nil, apperr.Invalidf("the sdp_offer could not be answered: %v", err)
	}
	ss.mu.Lock()
	ss.pickupT = ss.after(s.Calls.OutgoingWait(), func() {
		ss.end(calling.End{By: calling.BySystem, Status: models.CallMissed}, true)
	})
	ss.mu.Unlock()
	s.add(ss)
	s.Metrics.CallStarted("outgoing")
	return answer, l.ID, nil
}

// remoteAnswer applies the callee's SDP answer and bridges the legs.
func (ss *session) remoteAnswer(ctx context.Context, sdp string) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended || ss.bridged {
		return nil
	}
	if err := ss.call.SetPlatformAnswer(sdp); err != nil {
		go ss.end(calling.End{By: calling.BySystem, Status: models.CallFailed}, true)
		return fmt.Errorf("the callee's answer: %w", err)
	}
	ss.bridged = true
	ss.call.Bridge()
	ss.accepted(ctx)
	return nil
}

// accepted marks the pickup once (by the answer or by ACCEPTED, whichever
// comes first) and starts the duration limit.
func (ss *session) accepted(ctx context.Context) {
	ok, err := ss.srv.Calls.MarkProgress(ctx, ss.orgID, ss.callLogID, "ACCEPTED")
	if err != nil {
		ss.srv.Log.Warn("callbridge: marking a call accepted", "call_log_id", ss.callLogID, "error", err)
	}
	if ok {
		stop(ss.pickupT)
		ss.pickupT = nil
		ss.maxT = ss.after(timeoutOf(ss.settings.MaxCallDuration), ss.tooLong)
	}
}

// progress applies RINGING, ACCEPTED or REJECTED.
func (ss *session) progress(ctx context.Context, status string) error {
	if status == "REJECTED" {
		ss.end(calling.End{By: calling.ByCaller, Status: models.CallRejected}, false)
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.ended {
		return nil
	}
	if status == "ACCEPTED" {
		ss.accepted(ctx)
		return nil
	}
	_, err := ss.srv.Calls.MarkProgress(ctx, ss.orgID, ss.callLogID, status)
	return err
}
