package messaging

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/jobs"
	"wharf/models"
)

// Unconfirmed sends are settled after this long without a status.
const unconfirmedAfter = 10 * time.Minute

// SweepUnconfirmed re-enqueues queued sends whose task was lost, and fails
// sends whose outcome stayed unknown: they are not repeated, because the
// provider may have delivered them. The two statements use the partial
// indexes messages_queued and messages_unconfirmed, so they read only the
// pending sends, not every tenant's messages.
func (s *Service) SweepUnconfirmed(ctx context.Context) (requeued, failed int64, err error) {
	var lost []models.Message
	err = s.db.WithContext(ctx).Select("id", "organization_id").
		Where("status = 'pending' AND direction = 'outgoing' AND send_started_at IS NULL AND created_at < ?", s.now().Add(-time.Minute)).
		Limit(1000).Find(&lost).Error
	if err != nil {
		return 0, 0, err
	}
	for _, m := range lost {
		_, err := s.enq.Enqueue(ctx, jobs.MessageSend{OrganizationID: m.OrganizationID, MessageID: m.ID})
		switch {
		case err == nil:
			requeued++
		case !errors.Is(err, jobs.ErrDuplicate): // a duplicate is a task still queued: nothing was lost
			s.log.Warn("cannot re-enqueue a queued send; the next sweep retries", "message_id", m.ID, "error", err)
		}
	}
	// A message that a framework document projects records its change for
	// the projector in the same transaction (messaging.Project).
	var rows []struct {
		ID             uuid.UUID
		OrganizationID uuid.UUID
		Projected      bool
	}
	events := map[uuid.UUID][]uuid.UUID{}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Raw(`UPDATE messages SET status = ?, failed_at = ?, updated_at = ?, error_title = ?, error_detail = ?
			WHERE status = 'pending' AND send_started_at < ? AND platform_message_id IS NULL
			RETURNING id, organization_id, projected`,
			models.StatusFailed, s.now(), s.now(), "send outcome unknown",
			"the answer of the provider was lost and no status arrived; the message was not resent to avoid a duplicate",
			s.now().Add(-unconfirmedAfter)).Scan(&rows).Error
		if err != nil {
			return err
		}
		for _, r := range rows {
			if !r.Projected {
				continue
			}
			ev, err := s.recordChange(ctx, tx, r.OrganizationID, r.ID)
			if err != nil {
				return err
			}
			events[r.OrganizationID] = append(events[r.OrganizationID], ev)
		}
		return nil
	})
	if err != nil {
		return requeued, 0, err
	}
	for org, ids := range events {
		s.webhooks.Publish(ctx, org, ids...)
	}
	return requeued, int64(len(rows)), nil
}
