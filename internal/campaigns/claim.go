package campaigns

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/metrics"
	"wharf/models"
)

// claim moves up to n pending recipients (in import order) to sending under
// a fresh claim id. SKIP LOCKED lets parallel lanes claim different
// recipients without waiting; the status condition makes a recipient
// claimable once.
//
// The claim is idempotent: when the statement's answer is lost (the
// database restarted under it), the retry first looks for recipients already
// claimed under this claim id. Such recipients were never handed to the
// provider, so they are sent now rather than left sending for the sweep to
// call unknown.
func (s *Service) claim(ctx context.Context, campaignID uuid.UUID, n int) ([]models.CampaignRecipient, error) {
	claimID := uuid.New()
	var recs []models.CampaignRecipient
	tried := false
	err := s.retryDB(ctx, "claim recipients", func(ctx context.Context) error {
		recs = nil
		db := s.db.WithContext(ctx)
		if tried {
			err := db.Raw(`SELECT * FROM campaign_recipients WHERE campaign_id = ? AND status = 'sending' AND claim_id = ?`,
				campaignID, claimID).Scan(&recs).Error
			if err != nil || len(recs) > 0 {
				return err
			}
		}
		tried = true
		return db.Raw(`UPDATE campaign_recipients SET status = 'sending', claim_id = @claim, send_started_at = now(), updated_at = now()
			WHERE id IN (SELECT id FROM campaign_recipients WHERE campaign_id = @campaign AND status = 'pending'
			             ORDER BY seq LIMIT @n FOR UPDATE SKIP LOCKED)
			RETURNING *`, map[string]any{"claim": claimID, "campaign": campaignID, "n": n}).Scan(&recs).Error
	})
	return recs, err
}

// settleSent records that the provider accepted the recipient's message. A
// status webhook may have settled the recipient already (its answer came
// back before ours was recorded), so the update only moves a recipient that
// is still sending (or unknown), and fills the provider id only when
// missing. The provider has the message: this is retried while the
// database is away, because the alternative is a recipient that looks
// unsent.
func (s *Service) settleSent(ctx context.Context, id uuid.UUID, platformID string) {
	s.settleExec(ctx, id, `UPDATE campaign_recipients SET platform_message_id = COALESCE(platform_message_id, ?),
		status = CASE WHEN status IN ('sending', 'unknown') THEN 'sent' ELSE status END,
		sent_at = COALESCE(sent_at, now()), updated_at = now() WHERE id = ?`, platformID, id)
	s.metrics.CampaignSends(metrics.SendSent, 1)
}

// settleFailed records a send that certainly failed (or, with
// models.RecipientUnknown, one whose outcome nobody knows). attempted says
// whether a request reached the provider (it counts as an attempt).
func (s *Service) settleFailed(ctx context.Context, id uuid.UUID, status string, attempted bool, code *int, title, detail string) {
	s.settleExec(ctx, id, `UPDATE campaign_recipients SET status = ?, error_code = ?, error_title = ?, error_detail = ?,
		attempts = attempts + CASE WHEN ? THEN 1 ELSE 0 END,
		failed_at = CASE WHEN ? = 'failed' THEN now() ELSE failed_at END, updated_at = now()
		WHERE id = ? AND status = 'sending'`, status, code, apperr.Clip(title, 300), apperr.Clip(detail, 1000), attempted, status, id)
	s.metrics.CampaignSends(metrics.SendOutcome(status), 1) // the statuses are the outcomes' names: failed, unknown
}

// release gives a claimed recipient back: the provider certainly did not
// take the message (a throttle, an error answer, a stopped lane). attempt
// counts the release as a failed attempt (provider trouble); throttles and
// waits are not attempts.
func (s *Service) release(ctx context.Context, id uuid.UUID, attempt bool) {
	inc := 0
	if attempt {
		inc = 1
	}
	s.settleExec(ctx, id, `UPDATE campaign_recipients SET status = 'pending', claim_id = NULL, send_started_at = NULL,
		attempts = attempts + ?, updated_at = now() WHERE id = ? AND status = 'sending'`, inc, id)
	s.metrics.CampaignSends(metrics.SendReleased, 1)
}

// settleExec runs one idempotent recipient update, retrying while the
// database is away. It is not cancelled with the lane: a send that happened
// must be recorded.
func (s *Service) settleExec(ctx context.Context, id uuid.UUID, sql string, args ...any) {
	err := s.retryDB(context.WithoutCancel(ctx), "record a campaign send", func(ctx context.Context) error {
		return s.db.WithContext(ctx).Exec(sql, args...).Error
	})
	if err != nil {
		s.log.Error("cannot record a campaign send; a provider status or the sweeper will settle it", "recipient_id", id, "error", err)
	}
}
