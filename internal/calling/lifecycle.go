package calling

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/live"
	"wharf/internal/orgsettings"
	"wharf/models"
)

// The state changes of a call, as the callbridge that owns it makes them.
// Each is one statement or one transaction whose WHERE clause is the
// transition's precondition, so that racing requests (two connects, a
// hangup crossing the caller's terminate) resolve in the database: one
// wins, the other changes nothing.

// Who ended a call (call_logs.disconnected_by).
const (
	ByCaller = "caller"
	ByAgent  = "agent"
	BySystem = "system"
)

// Setup is what a callbridge loads to run a call.
type Setup struct {
	Log      models.CallLog
	Settings orgsettings.Settings
	Account  AccountCreds
}

// AccountCreds are the provider credentials of a call's account.
type AccountCreds struct {
	AccessToken   string
	PhoneNumberID string
}

// LoadSetup reads a call log, its account's credentials and its
// organization's settings.
func (s *Service) LoadSetup(ctx context.Context, orgID, callLogID uuid.UUID) (*Setup, error) {
	var st Setup
	if err := s.db.WithContext(ctx).Where("id = ? AND organization_id = ?", callLogID, orgID).Take(&st.Log).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.NotFoundf("call log not found")
		}
		return nil, err
	}
	if st.Log.AccountID == nil {
		return nil, apperr.Conflictf("the call's account was deleted")
	}
	a, err := s.accounts.Get(ctx, orgID, *st.Log.AccountID)
	if err != nil {
		return nil, err
	}
	st.Account = AccountCreds{AccessToken: a.AccessToken, PhoneNumberID: a.PhoneNumberID}
	if _, st.Settings, err = s.settings.Get(ctx, orgID); err != nil {
		return nil, err
	}
	return &st, nil
}

// MarkAnswered records that the platform leg was accepted: the log becomes
// answered and a waiting transfer (no team) puts the call in front of the
// organization's agents.
func (s *Service) MarkAnswered(ctx context.Context, l *models.CallLog) (*models.CallTransfer, error) {
	now := time.Now()
	t := models.CallTransfer{OrganizationID: l.OrganizationID, CallLogID: l.ID, PlatformCallID: l.PlatformCallID,
		CallerPhone: l.CallerPhone, ContactID: l.ContactID, PlatformAccount: l.PlatformAccount, Status: models.TransferWaiting,
		TransferredAt: now}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Exec(`UPDATE call_logs SET status = 'answered', answered_at = ?, updated_at = ? WHERE id = ? AND status = 'ringing'`,
			now, now, l.ID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Conflictf("the call is no longer ringing")
		}
		return tx.Create(&t).Error
	})
	if err != nil {
		return nil, err
	}
	l.Status, l.AnsweredAt = models.CallAnswered, &now
	s.announceTransfer(ctx, live.CallRinging, &t)
	return &t, nil
}

// MarkFailed ends a call that could not be set up.
func (s *Service) MarkFailed(ctx context.Context, orgID, callLogID uuid.UUID) error {
	_, err := s.Finish(ctx, orgID, callLogID, End{By: BySystem, Status: models.CallFailed})
	return err
}

// ClaimTransfer makes the agent the one connected to a waiting transfer:
// the first connect wins; a second, or one after the transfer ended, is a
// 409 that changes nothing.
func (s *Service) ClaimTransfer(ctx context.Context, orgID, transferID, agentID uuid.UUID) (*models.CallTransfer, error) {
	var t models.CallTransfer
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := time.Now()
		res := tx.Raw(`UPDATE call_transfers SET status = 'connected', agent_id = ?, connected_at = ?, updated_at = ?
			WHERE id = ? AND organization_id = ? AND status = 'waiting' RETURNING *`, agentID, now, now, transferID, orgID).Scan(&t)
		if res.Error != nil {
			return res.Error
		}
		if t.ID == uuid.Nil {
			return apperr.Conflictf("the call transfer is not waiting: another agent connected first, or the call ended")
		}
		// After a transfer to a team the log is transferring until the
		// team's agent connects.
		return tx.Exec(`UPDATE call_logs SET agent_id = ?, updated_at = ?,
			status = CASE WHEN status = 'transferring' THEN 'connected' ELSE status END WHERE id = ?`, agentID, now, t.CallLogID).Error
	})
	if err != nil {
		return nil, err
	}
	s.announceTransfer(ctx, live.CallAnswered, &t)
	return &t, nil
}

// UnclaimTransfer puts a claimed transfer back to waiting when the agent's
// leg could not be set up.
func (s *Service) UnclaimTransfer(ctx context.Context, orgID, transferID uuid.UUID) error {
	return s.db.WithContext(ctx).Exec(`UPDATE call_transfers SET status = 'waiting', agent_id = NULL, connected_at = NULL, updated_at = now()
		WHERE id = ? AND organization_id = ? AND status = 'connected'`, transferID, orgID).Error
}

// MarkHold records a hold: only a call with a connected agent can be held.
func (s *Service) MarkHold(ctx context.Context, orgID, callLogID uuid.UUID) error {
	res := s.db.WithContext(ctx).Exec(`UPDATE call_logs l SET status = 'on_hold', hold_started_at = now(), updated_at = now()
		WHERE l.id = ? AND l.organization_id = ? AND l.ended_at IS NULL AND l.status IN ('answered', 'connected', 'accepted')
		AND (l.direction = 'outgoing' OR EXISTS (SELECT 1 FROM call_transfers t WHERE t.call_log_id = l.id AND t.status = 'connected'))`,
		callLogID, orgID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.Conflictf("only a call with a connected agent can be put on hold")
	}
	return nil
}

// MarkResume ends a hold and adds its time to the connected transfer.
func (s *Service) MarkResume(ctx context.Context, orgID, callLogID uuid.UUID) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := addHoldTime(tx, callLogID); err != nil {
			return err
		}
		res := tx.Exec(`UPDATE call_logs SET status = 'connected', hold_started_at = NULL, updated_at = now()
			WHERE id = ? AND organization_id = ? AND status = 'on_hold' AND ended_at IS NULL`, callLogID, orgID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Conflictf("the call is not on hold")
		}
		return nil
	})
}

// addHoldTime adds the current hold's seconds to the call's connected
// transfer (nothing when the call is not on hold).
func addHoldTime(tx *gorm.DB, callLogID uuid.UUID) error {
	return tx.Exec(`UPDATE call_transfers t SET hold_duration = t.hold_duration
			+ GREATEST(0, round(EXTRACT(EPOCH FROM now() - l.hold_started_at)))::int, updated_at = now()
		FROM call_logs l WHERE l.id = ? AND t.call_log_id = l.id AND t.status = 'connected' AND l.hold_started_at IS NOT NULL`,
		callLogID).Error
}

// MarkTransfer moves a call with a connected agent to a team: the current
// transfer completes, a new one waits with the team (and the agent given or
// picked by the team's strategy), the log is transferring.
func (s *Service) MarkTransfer(ctx context.Context, orgID, callLogID, initiator, teamID uuid.UUID, agentID *uuid.UUID) (*models.CallTransfer, error) {
	var nt models.CallTransfer
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var l models.CallLog
		if err := tx.Raw(`SELECT * FROM call_logs WHERE id = ? AND organization_id = ? FOR UPDATE`, callLogID, orgID).Scan(&l).Error; err != nil {
			return err
		}
		if l.ID == uuid.Nil {
			return apperr.NotFoundf("call log not found")
		}
		if l.EndedAt != nil {
			return apperr.Conflictf("the call has ended")
		}
		if err := addHoldTime(tx, l.ID); err != nil {
			return err
		}
		if err := completeConnected(tx, l.ID); err != nil {
			return err
		}
		// A transfer still waiting (nobody took the call yet) is replaced.
		if err := tx.Exec(`UPDATE call_transfers SET status = 'completed', ended_at = now(), updated_at = now()
			WHERE call_log_id = ? AND status = 'waiting'`, l.ID).Error; err != nil {
			return err
		}
		agent := agentID
		if agent == nil {
			picked, err := s.pickAgent(ctx, tx, orgID, teamID)
			if err != nil {
				return err
			}
			agent = picked
		}
		if agent != nil {
			// The team's turn moves at the database's clock, as before.
			if err := s.teams.AssignedIn(ctx, tx, orgID, teamID, *agent, time.Time{}); err != nil {
				return err
			}
		}
		nt = models.CallTransfer{OrganizationID: orgID, CallLogID: l.ID, PlatformCallID: l.PlatformCallID, CallerPhone: l.CallerPhone,
			ContactID: l.ContactID, PlatformAccount: l.PlatformAccount, Status: models.TransferWaiting, TeamID: &teamID,
			AgentID: agent, InitiatingAgentID: &initiator, TransferredAt: time.Now()}
		if err := tx.Create(&nt).Error; err != nil {
			return err
		}
		return tx.Exec(`UPDATE call_logs SET status = 'transferring', hold_started_at = NULL, updated_at = now() WHERE id = ?`, l.ID).Error
	})
	if err != nil {
		return nil, err
	}
	s.announceTransfer(ctx, live.CallRinging, &nt)
	return &nt, nil
}

// completeConnected ends the call's connected transfer with its talk time.
func completeConnected(tx *gorm.DB, callLogID uuid.UUID) error {
	return tx.Exec(`UPDATE call_transfers SET status = 'completed', ended_at = now(), updated_at = now(),
		talk_duration = GREATEST(0, round(EXTRACT(EPOCH FROM now() - connected_at))::int - hold_duration)
		WHERE call_log_id = ? AND status = 'connected'`, callLogID).Error
}

// pickAgent chooses an available, active member of the team by its
// strategy (teams.NextAgentIn, in the call's transaction: round_robin: the
// longest since an assignment; load_balanced: the fewest connected calls
// first; manual: nobody).
func (s *Service) pickAgent(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID) (*uuid.UUID, error) {
	strategy, err := s.teams.StrategyIn(ctx, tx, orgID, teamID)
	if err != nil {
		return nil, err
	}
	id, err := s.teams.NextAgentIn(ctx, tx, orgID, teamID, strategy, connectedCalls)
	if err != nil || id == uuid.Nil {
		return nil, err
	}
	return &id, nil
}

// connectedCalls counts the agents' connected calls (of any organization:
// an agent takes one call at a time), load_balanced's measure for calls.
func connectedCalls(ctx context.Context, tx *gorm.DB, agents []uuid.UUID) (map[uuid.UUID]int64, error) {
	var rows []struct {
		AgentID uuid.UUID
		N       int64
	}
	err := tx.WithContext(ctx).Raw(`SELECT agent_id, count(*) AS n FROM call_transfers WHERE status = 'connected' AND agent_id IN ?
		GROUP BY agent_id`, agents).Scan(&rows).Error
	out := make(map[uuid.UUID]int64, len(rows))
	for _, r := range rows {
		out[r.AgentID] = r.N
	}
	return out, err
}

// TransferTimedOut ends a transfer nobody connected to in time; false when
// it is no longer waiting (an agent connected meanwhile).
func (s *Service) TransferTimedOut(ctx context.Context, orgID, transferID uuid.UUID) (bool, error) {
	res := s.db.WithContext(ctx).Exec(`UPDATE call_transfers SET status = 'no_answer', ended_at = now(), updated_at = now()
		WHERE id = ? AND organization_id = ? AND status = 'waiting'`, transferID, orgID)
	return res.RowsAffected > 0, res.Error
}

// End describes how a call ended.
type End struct {
	By string // ByCaller, ByAgent, BySystem
	// Status is the log's final status; "" picks completed when an agent
	// talked to the caller, else missed.
	Status string
}

// Finish ends a call once: open transfers end (connected → completed with
// their talk time, waiting → abandoned when the caller hung up, else
// no_answer), a hold's time is added, and the log gets its final status,
// end and duration (from the answer). False when it had already ended.
func (s *Service) Finish(ctx context.Context, orgID, callLogID uuid.UUID, e End) (bool, error) {
	ended := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var l models.CallLog
		if err := tx.Raw(`SELECT * FROM call_logs WHERE id = ? AND organization_id = ? FOR UPDATE`, callLogID, orgID).Scan(&l).Error; err != nil {
			return err
		}
		if l.ID == uuid.Nil || l.EndedAt != nil {
			return nil
		}
		if err := addHoldTime(tx, l.ID); err != nil {
			return err
		}
		if err := completeConnected(tx, l.ID); err != nil {
			return err
		}
		waiting := models.TransferNoAnswer
		if e.By == ByCaller {
			waiting = models.TransferAbandoned
		}
		if err := tx.Exec(`UPDATE call_transfers SET status = ?, ended_at = now(), updated_at = now()
			WHERE call_log_id = ? AND status = 'waiting'`, waiting, l.ID).Error; err != nil {
			return err
		}
		status := e.Status
		if status == "" {
			status = models.CallMissed
			if l.AgentID != nil && l.AnsweredAt != nil {
				status = models.CallCompleted
			}
		}
		ended = true
		return tx.Exec(`UPDATE call_logs SET status = ?, ended_at = now(), disconnected_by = ?, hold_started_at = NULL, updated_at = now(),
			duration = CASE WHEN answered_at IS NULL THEN 0 ELSE GREATEST(0, round(EXTRACT(EPOCH FROM now() - answered_at)))::int END
			WHERE id = ?`, status, e.By, l.ID).Error
	})
	if ended && err == nil {
		s.announceEnd(ctx, orgID, callLogID)
	}
	return ended, err
}

// SetRecording records where a call's mixed recording is stored.
func (s *Service) SetRecording(ctx context.Context, orgID, callLogID uuid.UUID, key string, seconds int) error {
	return s.db.WithContext(ctx).Exec(`UPDATE call_logs SET recording_key = ?, recording_duration = ?, updated_at = now()
		WHERE id = ? AND organization_id = ?`, key, seconds, callLogID, orgID).Error
}

// OpenCalls lists the calls not yet ended, for the orphan sweep.
func (s *Service) OpenCalls(ctx context.Context) ([]models.CallLog, error) {
	var out []models.CallLog
	err := s.db.WithContext(ctx).Where("ended_at IS NULL").Find(&out).Error // every final status sets ended_at
	return out, err
}

func ignoreNoRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}
