package calling

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/models"
	"wharf/platform"
)

// The calls webhook consumer runs in the worker, like every inbound event:
// it records what the provider said in the call's log, in the event's
// transaction, and hands the media work to a callbridge after the commit.
// The media (answering, bridging) never happens here.

// incomingWait bounds how long a new call waits in the queue for a
// callbridge: the provider rings the caller for about a minute; a call
// answered later than this would surprise everyone.
const incomingWait = 20 * time.Second

// ConsumerName implements inbound.Consumer.
func (s *Service) ConsumerName() string { return "calling" }

// EventType implements inbound.EventConsumer: the "calls" webhook field.
func (s *Service) EventType() string { return platform.FieldCalls }

type callsValue struct {
	Contacts []struct {
		Profile struct {
			Name string `json:"name"`
		} `json:"profile"`
		WaID string `json:"wa_id"`
	} `json:"contacts"`
	Calls []struct {
		ID        string `json:"id"`
		From      string `json:"from"`
		To        string `json:"to"`
		Event     string `json:"event"`
		Direction string `json:"direction"`
		Status    string `json:"status"`
		Session   *struct {
			SDPType string `json:"sdp_type"`
			SDP     string `json:"sdp"`
		} `json:"session"`
	} `json:"calls"`
	Statuses []struct {
		ID     string `json:"id"`
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"statuses"`
}

// ConsumeEvent implements inbound.EventConsumer.
func (s *Service) ConsumeEvent(ctx context.Context, tx *gorm.DB, ev *inbound.Event) (func(context.Context), error) {
	var v callsValue
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		return nil, nil // not a calls value we understand: nothing to apply, nothing to retry
	}
	acct := ev.Account
	var after []func(context.Context)
	for _, c := range v.Calls {
		switch {
		case c.ID == "":
		case c.Event == "connect" && c.Session != nil && c.Session.SDPType == "offer" && c.Direction != "BUSINESS_INITIATED":
			fn, err := s.newIncoming(ctx, tx, acct.OrganizationID, acct.ID, acct.Name, c.ID, c.From, profileName(v, c.From), c.Session.SDP)
			if err != nil {
				return nil, err
			}
			after = append(after, fn)
		case c.Event == "connect" && c.Session != nil && c.Session.SDPType == "answer":
			after = append(after, s.routeEvent(ctx, tx, acct.OrganizationID, c.ID, Request{Op: OpRemoteAnswer, SDP: c.Session.SDP}))
		case c.Event == "terminate":
			after = append(after, s.routeEvent(ctx, tx, acct.OrganizationID, c.ID, Request{Op: OpRemoteEnd, Status: c.Status}))
		}
	}
	for _, st := range v.Statuses {
		if st.Type == "call" && st.ID != "" {
			after = append(after, s.routeEvent(ctx, tx, acct.OrganizationID, st.ID, Request{Op: OpRemoteProgress, Status: st.Status}))
		}
	}
	return func(ctx context.Context) {
		for _, fn := range after {
			if fn != nil {
				fn(ctx)
			}
		}
	}, nil
}

func profileName(v callsValue, waID string) string {
	for _, c := range v.Contacts {
		if c.WaID == waID {
			return c.Profile.Name
		}
	}
	return ""
}

// newIncoming logs a user-initiated call once (a redelivered webhook finds
// it) and, after the commit, hands it to a callbridge, or logs it missed
// when the organization has calling off.
func (s *Service) newIncoming(ctx context.Context, tx *gorm.DB, orgID, accountID uuid.UUID, accountName, callID, from, name, offer string) (func(context.Context), error) {
	_, set, err := s.settings.Get(ctx, orgID)
	if err != nil {
		return nil, err
	}
	contact, err := s.contacts.FindOrCreate(ctx, orgID, from, &accountID)
	if err != nil {
		return nil, fmt.Errorf("calling: contact of %s: %w", from, err)
	}
	status, ended := models.CallRinging, (*time.Time)(nil)
	if !set.CallingEnabled {
		now := time.Now()
		status, ended = models.CallMissed, &now
	}
	var id uuid.UUID
	err = tx.WithContext(ctx).Raw(`INSERT INTO call_logs (organization_id, account_id, platform_account, contact_id, platform_call_id,
			caller_phone, direction, status, ended_at)
		VALUES (?, ?, ?, ?, ?, ?, 'incoming', ?, ?) ON CONFLICT (organization_id, platform_call_id) DO NOTHING RETURNING id`,
		orgID, accountID, accountName, contact.ID, callID, contact.PhoneNumber, status, ended).Row().Scan(&id)
	if err != nil || !set.CallingEnabled {
		return nil, ignoreNoRows(err) // redelivered, or not ours to answer
	}
	return func(ctx context.Context) { s.dispatchIncoming(ctx, orgID, id, offer) }, nil
}

// dispatchIncoming queues a new call for whichever callbridge is free.
func (s *Service) dispatchIncoming(ctx context.Context, orgID, callLogID uuid.UUID, offer string) {
	alive, err := s.anyAlive(ctx)
	if err == nil && alive {
		err = s.post(ctx, anyQueue, &Request{Op: OpIncoming, OrgID: orgID, CallLogID: callLogID, SDP: offer,
			Deadline: time.Now().Add(incomingWait)})
		if err == nil {
			return
		}
	}
	s.log.Error("calling: an incoming call cannot be answered", "call_log_id", callLogID, "error", err, "callbridge_alive", alive)
	s.endOrphan(ctx, orgID, callLogID, "reject")
}

// routeEvent finds the call a webhook event is about and, after the
// commit, passes the event to its owner; with no live owner, the event is
// applied to the log directly (a terminate ends it).
func (s *Service) routeEvent(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, callID string, r Request) func(context.Context) {
	var id uuid.UUID
	if err := tx.WithContext(ctx).Raw(`SELECT id FROM call_logs WHERE organization_id = ? AND platform_call_id = ?`, orgID, callID).
		Row().Scan(&id); err != nil {
		return nil // a call we never logged (another system's, or a missed one pruned): nothing to do
	}
	r.OrgID, r.CallLogID = orgID, id
	return func(ctx context.Context) {
		owner, err := s.owner(ctx, id)
		if err == nil && owner != "" {
			if err = s.post(ctx, instanceQueue(owner), &r); err == nil {
				return
			}
		}
		if err != nil {
			s.log.Warn("calling: routing a call event", "call_log_id", id, "op", r.Op, "error", err)
		}
		switch r.Op {
		case OpRemoteEnd:
			_, _ = s.Finish(ctx, orgID, id, End{By: ByCaller})
		case OpRemoteProgress:
			if r.Status == "REJECTED" {
				_, _ = s.Finish(ctx, orgID, id, End{By: ByCaller, Status: models.CallRejected})
			}
		}
	}
}
