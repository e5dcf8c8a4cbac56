package messaging

import (
	"context"
	"errors"
	"time"

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
	res := s.db.WithContext(ctx).Model(&models.Message{}).
		Where("status = 'pending' AND send_started_at < ? AND platform_message_id IS NULL", s.now().Add(-unconfirmedAfter)).
		Updates(map[string]any{"status": models.StatusFailed, "failed_at": s.now(), "updated_at": s.now(),
			"error_title":  "send outcome unknown",
			"error_detail": "the answer of the provider was lost and no status arrived; the message was not resent to avoid a duplicate"})
	return requeued, res.RowsAffected, res.Error
}
