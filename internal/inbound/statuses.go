package inbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"wharf/internal/infra/statuses"
	"wharf/models"
	"wharf/platform"
)

// statusBatch is how many status events one transaction claims.
const statusBatch = 200

// ProcessStatuses is the inbound:statuses job: it claims pending status
// events of the account in batches, in the order they arrived, and applies
// them with a few set-based statements per batch, until none is left.
//
// One account's batches apply one after the other. The rules are stateful —
// a failure after a delivery does not count, nothing leaves failed — so a
// later batch committing first would count a message's failure that came
// after its delivery (two tasks did, under load:
// TestCountersFollowStatusesExactly). Different accounts still apply in
// parallel.
//
// One task at a time drains an account: a batch's transaction first takes
// the account's advisory lock, and a task that finds it taken returns at
// once, leaving the events it was woken for to the task holding it. (It
// used to wait on the events' row locks instead: under a burst every
// worker slot and its database connection waited there, and each waiter
// then claimed only the rows its old snapshot had seen — batches of 60
// instead of 200.) The holder keeps no event behind: after a batch that
// was not full, with the lock released, it looks once more for pending
// events. An event stored before a task found the lock taken was stored
// before the holder's release, so before that look, which finds it.
func (s *Service) ProcessStatuses(ctx context.Context, orgID, accountID uuid.UUID) error {
	for {
		n, err := s.statusBatchRetried(ctx, orgID, accountID)
		if err != nil || n == lockHeld {
			return err
		}
		if n == statusBatch {
			continue
		}
		var pending bool
		if err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM inbound_events
			WHERE account_id = ? AND kind = ? AND processed_at IS NULL)`, accountID, EventStatuses).Scan(&pending).Error; err != nil || !pending {
			return err
		}
	}
}

// lockHeld is statusBatch's count when another task holds the account's
// status lock (and so drains its events).
const lockHeld = -1

// conflictRetries is how often a batch whose transaction PostgreSQL aborted
// to resolve a conflict is run again before the job fails (and asynq
// retries it).
const conflictRetries = 3

// statusBatchRetried runs statusBatch again when PostgreSQL aborted it for
// a deadlock or a serialization failure. The consumers lock the rows of a
// batch in a consistent order, so two status batches do not deadlock each
// other; other writers of the same rows (the campaign sweep settling many
// recipients) still can, and the whole transaction can simply run again.
func (s *Service) statusBatchRetried(ctx context.Context, orgID, accountID uuid.UUID) (int, error) {
	for attempt := 1; ; attempt++ {
		n, err := s.statusBatch(ctx, orgID, accountID)
		if err == nil || !conflict(err) || attempt == conflictRetries {
			return n, err
		}
		s.log.Info("status batch aborted by a conflict; running it again", "account_id", accountID, "attempt", attempt, "error", err)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		}
	}
}

// conflict reports a transaction that PostgreSQL aborted to resolve a
// conflict with another: a deadlock (40P01) or a serialization failure
// (40001). Running it again is the documented remedy.
func conflict(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// statusBatch claims one batch, reduces its statuses to one outcome per
// message and hands the outcomes down the chain of status consumers.
func (s *Service) statusBatch(ctx context.Context, orgID, accountID uuid.UUID) (int, error) {
	var events []models.InboundEvent
	var after []func(context.Context)
	held := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var locked bool
		if err := tx.Raw(`SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))`, "inbound-statuses/"+accountID.String()).
			Scan(&locked).Error; err != nil {
			return err
		}
		if !locked {
			held = true
			return nil
		}
		// The lock orders the account's batches; FOR UPDATE as well keeps
		// the rows this batch's beside a worker of the previous version
		// (which takes no lock) during a rolling upgrade.
		if err := tx.Raw(`SELECT * FROM inbound_events WHERE account_id = ? AND kind = ? AND processed_at IS NULL
			ORDER BY id LIMIT ? FOR UPDATE`, accountID, EventStatuses, statusBatch).Scan(&events).Error; err != nil {
			return err
		}
		if len(events) == 0 {
			return nil
		}
		var sts []platform.Status
		ids := make([]int64, len(events))
		for i, ev := range events {
			ids[i] = ev.ID
			var v platform.MessagesValue
			if err := json.Unmarshal(ev.Payload, &v); err != nil {
				s.log.Error("unreadable status event set aside", "event_id", ev.ID, "error", err)
				continue
			}
			sts = append(sts, v.Statuses...)
		}
		all := statuses.Reduce(sts, s.now())
		outcomes := all
		for _, c := range s.consumers.statuses {
			res, err := c.ApplyStatuses(ctx, tx, StatusBatch{OrganizationID: orgID, AccountID: accountID, Outcomes: outcomes, All: all})
			if err != nil {
				return fmt.Errorf("%s: %w", c.ConsumerName(), err)
			}
			if res.AfterCommit != nil {
				after = append(after, res.AfterCommit)
			}
			outcomes = res.Unmatched
		}
		for _, o := range outcomes {
			s.log.Info("status for an unknown message ignored", "platform_message_id", o.PlatformID, "status", o.Final)
		}
		return tx.Exec(`UPDATE inbound_events SET processed_at = now() WHERE id IN ?`, ids).Error
	})
	if err != nil {
		return 0, err
	}
	if held {
		return lockHeld, nil
	}
	for _, ev := range events {
		s.metrics.InboundApplied(ev.EventType, ev.ReceivedAt)
	}
	for _, fn := range after {
		fn(ctx)
	}
	return len(events), nil
}
