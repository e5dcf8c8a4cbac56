package campaigns

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/jobs"
	"wharf/models"
)

// RequestRecount asks for the campaign's counters to be recomputed at the
// end of the current counter interval (whole seconds, because asynq
// schedules with one-second resolution). Every request in an interval maps
// to the same task (its id names the interval), so a campaign's row is
// written at most once per interval however many sends and statuses happen.
// The task runs after its interval ended, hence after every change of that
// interval was committed (callers request after their commit): the last
// change is always followed by a recount.
func (s *Service) RequestRecount(ctx context.Context, orgID, campaignID uuid.UUID) {
	step := max(s.cfg.CounterInterval.Round(time.Second), time.Second)
	if step < s.cfg.CounterInterval {
		step += time.Second
	}
	bucket := s.now().Truncate(step).Add(step).UnixMilli()
	if last, ok := s.recounts.Load(campaignID); ok && last.(int64) == bucket {
		return // already requested from this process
	}
	s.recounts.Store(campaignID, bucket)
	_, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.CampaignRecount{OrganizationID: orgID, CampaignID: campaignID, Bucket: bucket})
	if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
		s.log.Warn("cannot enqueue a campaign recount; the sweeper will do it", "campaign_id", campaignID, "error", err)
	}
}

// Recount recomputes the counters from the recipients, which are the truth:
// sent counts recipients the provider accepted, delivered those delivered
// (a read without a delivered counts as both), read, failed and unknown by
// status. A sending campaign with nobody pending or sending is completed.
// A projected campaign's recount records campaign.changed in its
// transaction (project.go).
func (s *Service) Recount(ctx context.Context, orgID, campaignID uuid.UUID) error {
	projected, err := s.projectedCampaign(ctx, s.db, orgID, campaignID)
	if err != nil {
		return err
	}
	args := map[string]any{"id": campaignID, "org": orgID}
	var counted []models.Campaign
	var event uuid.UUID
	if !projected {
		err = s.db.WithContext(ctx).Raw(recountSQL, args).Scan(&counted).Error
	} else {
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Raw(recountSQL, args).Scan(&counted).Error; err != nil || len(counted) != 1 {
				return err
			}
			var err error
			event, err = s.recordChange(ctx, tx, orgID, Change{CampaignID: campaignID, Counted: true})
			return err
		})
	}
	if err == nil && len(counted) == 1 {
		s.announce(ctx, &counted[0])
		s.publishChange(ctx, orgID, event)
	}
	return err
}

// recountSQL recounts campaign @id of organization @org and answers it.
const recountSQL = `
WITH c AS (
    SELECT count(*) FILTER (WHERE sent_at IS NOT NULL) AS sent,
           count(*) FILTER (WHERE delivered_at IS NOT NULL) AS delivered,
           count(*) FILTER (WHERE read_at IS NOT NULL) AS read,
           count(*) FILTER (WHERE status = 'failed') AS failed,
           count(*) FILTER (WHERE status = 'unknown') AS unknown,
           count(*) FILTER (WHERE status = 'skipped') AS skipped,
           count(*) FILTER (WHERE status = 'pending') AS pending,
           count(*) FILTER (WHERE status = 'sending') AS sending,
           count(*) AS total
    FROM campaign_recipients WHERE campaign_id = @id
)
UPDATE campaigns SET sent_count = c.sent, delivered_count = c.delivered, read_count = c.read, failed_count = c.failed,
    unknown_count = c.unknown, skipped_count = c.skipped, pending_count = c.pending, sending_count = c.sending, total_recipients = c.total, counted_at = now(),
    completed_at = CASE WHEN status = 'sending' AND c.pending + c.sending = 0 THEN now() ELSE completed_at END,
    status       = CASE WHEN status = 'sending' AND c.pending + c.sending = 0 THEN 'completed' ELSE status END,
    updated_at   = now()
FROM c WHERE id = @id AND organization_id = @org
RETURNING campaigns.*`
