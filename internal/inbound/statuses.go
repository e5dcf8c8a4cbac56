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

	"wharf/internal/statuses"
	"wharf/models"
	"wharf/platform"
)

// statusBatch is how many status events one transaction claims.
const statusBatch = 200

// ProcessStatuses is the inbound:statuses job: it claims pending status
// events of the account in batches, in the order they arrived, and applies
// them with a few set-based statements per batch, until none is left.
//
// One account's batches apply one after the other (FOR UPDATE without SKIP
// LOCKED: a second task waits for the first's batch to commit, then claims
// the events after it). The rules are stateful — a failure after a delivery
// does not count, nothing leaves failed — so a later batch committing first
// would count a message's failure that came after its delivery (two tasks
// did, under load: TestCountersFollowStatusesExactly). Different accounts
// still apply in parallel.
func (s *Service) ProcessStatuses(ctx context.Context, orgID, accountID uuid.UUID) error {
	for {
		n, err := s.statusBatchRetried(ctx, orgID, accountID)
		if err != nil || n < statusBatch {
			return err
		}
	}
}

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
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
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
	for _, ev := range events {
		s.metrics.InboundApplied(ev.EventType, ev.ReceivedAt)
	}
	for _, fn := range after {
		fn(ctx)
	}
	return len(events), nil
}
