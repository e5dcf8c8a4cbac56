package campaigns

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// RetryFailed puts a campaign's failed recipients back to pending, as if
// never sent (their earlier provider id, times and error are cleared, and
// their attempts), and sends them again: a completed campaign runs again
// (a new run generation); a paused one stays paused and sends them when
// resumed. A sending campaign is refused (it is not done failing), and so
// are cancelled ones and campaigns that never ran. Unknown recipients are
// not retried: the provider may have their message (ResendUnknown).
//
// A late status of a retried recipient's first message that carries the
// recipient's callback data can still apply to it (statuses only move
// forward; a "failed" after the new send's "delivered" is ignored).
func (s *Service) RetryFailed(ctx context.Context, orgID, id uuid.UUID) (int64, *models.Campaign, error) {
	var n int64
	var rerun *models.Campaign
	var retried uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		c, err := get(ctx, tx.Clauses(clause.Locking{Strength: "UPDATE"}), orgID, id)
		if err != nil {
			return err
		}
		switch c.Status {
		case models.CampaignCompleted, models.CampaignPaused:
		case models.CampaignSending:
			return apperr.Conflictf("the campaign is still sending: retry its failed recipients once it completed")
		default:
			return apperr.Conflictf("cannot retry the failed recipients of a campaign that is %s", c.Status)
		}
		// A projected campaign's document of each failed send keeps it.
		if retried, err = s.recordRetried(ctx, tx, c); err != nil {
			return err
		}
		res := tx.Exec(`UPDATE campaign_recipients SET status = 'pending', claim_id = NULL, send_started_at = NULL,
			platform_message_id = NULL, sent_at = NULL, delivered_at = NULL, read_at = NULL, failed_at = NULL,
			error_code = NULL, error_title = '', error_detail = '', attempts = 0, updated_at = now()
			WHERE campaign_id = ? AND status = 'failed'`, id)
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		if n == 0 || c.Status != models.CampaignCompleted {
			return nil
		}
		var run models.Campaign
		if err := tx.Model(&run).Where("id = ?", id).Clauses(returningAll).Updates(map[string]any{"status": models.CampaignSending,
			"completed_at": nil, "run_generation": gorm.Expr("run_generation + 1"), "updated_at": s.now()}).Error; err != nil {
			return err
		}
		rerun = &run
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	s.publishChange(ctx, orgID, retried)
	if rerun != nil {
		s.enqueueLanes(ctx, rerun)
	}
	if err := s.Recount(ctx, orgID, id); err != nil {
		return 0, nil, err
	}
	c, err := s.Get(ctx, orgID, id)
	return n, c, err
}
