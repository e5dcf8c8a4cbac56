package campaigns

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/metrics"
	"wharf/models"
)

// SweepResult says what a sweep did.
type SweepResult struct {
	Unknown   int64 // recipients settled as unknown
	Restarted int   // stalled campaigns given fresh lanes
}

// Sweep settles recipients left sending by a dead worker (they become
// unknown: the provider may have their message, so they are not resent),
// gives fresh lanes to sending campaigns that stopped claiming although
// recipients are pending, and recounts every sending campaign (which
// completes finished ones).
func (s *Service) Sweep(ctx context.Context) (*SweepResult, error) {
	res := &SweepResult{}
	var stale []uuid.UUID
	err := s.db.WithContext(ctx).Raw(`UPDATE campaign_recipients SET status = 'unknown', error_title = 'send outcome unknown',
		error_detail = 'the worker stopped during the send; a provider status will settle it if the message was accepted; it is not resent, to avoid a duplicate',
		updated_at = now()
		WHERE status = 'sending' AND send_started_at < ? RETURNING campaign_id`, s.now().Add(-s.cfg.SendingTimeout)).Scan(&stale).Error
	if err != nil {
		return nil, err
	}
	res.Unknown = int64(len(stale))
	s.metrics.CampaignSends(metrics.SendUnknown, len(stale))
	var running []models.Campaign
	if err := s.db.WithContext(ctx).Where("status = ?", models.CampaignSending).Find(&running).Error; err != nil {
		return nil, err
	}
	for i := range running {
		c := &running[i]
		var last struct {
			Pending   int64
			LastClaim *time.Time
		}
		if err := s.db.WithContext(ctx).Raw(`SELECT count(*) FILTER (WHERE status = 'pending') AS pending, max(send_started_at) AS last_claim
			FROM campaign_recipients WHERE campaign_id = ?`, c.ID).Scan(&last).Error; err != nil {
			return nil, err
		}
		since := c.StartedAt
		if last.LastClaim != nil {
			since = last.LastClaim
		}
		if last.Pending > 0 && since != nil && s.now().Sub(*since) > s.cfg.StallAfter {
			restarted, err := s.transition(ctx, c.OrganizationID, c.ID, []models.CampaignStatus{models.CampaignSending}, "restart",
				map[string]any{"run_generation": gorm.Expr("run_generation + 1")})
			if err == nil {
				s.log.Warn("campaign stalled; fresh lanes started", "campaign_id", c.ID, "pending", last.Pending)
				s.enqueueLanes(ctx, restarted)
				res.Restarted++
			}
		} else if last.Pending > 0 {
			s.enqueueLanes(ctx, c) // deduplicated: starts only lanes that are gone
		}
		if err := s.Recount(ctx, c.OrganizationID, c.ID); err != nil {
			return nil, err
		}
	}
	for _, id := range stale {
		var org uuid.UUID
		if s.db.WithContext(ctx).Raw(`SELECT organization_id FROM campaigns WHERE id = ?`, id).Scan(&org).Error == nil {
			s.RequestRecount(ctx, org, id)
		}
	}
	return res, nil
}
