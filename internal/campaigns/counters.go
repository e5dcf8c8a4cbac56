package campaigns

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/messaging"
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
func (s *Service) Recount(ctx context.Context, orgID, campaignID uuid.UUID) error {
	return s.db.WithContext(ctx).Exec(`
WITH c AS (
    SELECT count(*) FILTER (WHERE sent_at IS NOT NULL) AS sent,
           count(*) FILTER (WHERE delivered_at IS NOT NULL) AS delivered,
           count(*) FILTER (WHERE read_at IS NOT NULL) AS read,
           count(*) FILTER (WHERE status = 'failed') AS failed,
           count(*) FILTER (WHERE status = 'unknown') AS unknown,
           count(*) FILTER (WHERE status = 'pending') AS pending,
           count(*) FILTER (WHERE status = 'sending') AS sending,
           count(*) AS total
    FROM campaign_recipients WHERE campaign_id = @id
)
UPDATE campaigns SET sent_count = c.sent, delivered_count = c.delivered, read_count = c.read, failed_count = c.failed,
    unknown_count = c.unknown, pending_count = c.pending, sending_count = c.sending, total_recipients = c.total, counted_at = now(),
    completed_at = CASE WHEN status = 'sending' AND c.pending + c.sending = 0 THEN now() ELSE completed_at END,
    status       = CASE WHEN status = 'sending' AND c.pending + c.sending = 0 THEN 'completed' ELSE status END,
    updated_at   = now()
FROM c WHERE id = @id AND organization_id = @org`, map[string]any{"id": campaignID, "org": orgID}).Error
}

// applySQL applies reduced provider statuses to campaign recipients: forward
// only; a recipient the provider accepted, or whose outcome was unknown, can
// become sent, delivered, read or failed (failed only before delivery).
var applySQL = messaging.StatusSQL("campaign_recipients", "r", `(CASE
        WHEN v.final = 'failed'    AND r.status IN ('sending', 'sent', 'unknown')              THEN 'failed'
        WHEN v.final = 'read'      AND r.status IN ('sending', 'sent', 'delivered', 'unknown') THEN 'read'
        WHEN v.final = 'delivered' AND r.status IN ('sending', 'sent', 'unknown')              THEN 'delivered'
        WHEN v.final = 'sent'      AND r.status IN ('sending', 'unknown')                      THEN 'sent'
        ELSE r.status END)`, "r.organization_id = @org", "r.campaign_id")

// ApplyStatuses applies provider statuses that the messaging domain did not
// know to campaign recipients, inside tx: by provider id, or, for a send
// whose answer was lost, by the recipient id in the callback data. It
// returns the statuses that match no recipient either, and a function that
// requests recounts of the touched campaigns (call it after the commit).
func (s *Service) ApplyStatuses(ctx context.Context, tx *gorm.DB, orgID, _ uuid.UUID, outcomes []*messaging.Outcome) ([]*messaging.Outcome, func(context.Context), error) {
	touched := map[uuid.UUID]bool{}
	apply := func(os []*messaging.Outcome) error {
		b, err := json.Marshal(os)
		if err != nil {
			return err
		}
		var ids []uuid.UUID
		if err := tx.WithContext(ctx).Raw(applySQL, map[string]any{"outcomes": string(b), "org": orgID}).Scan(&ids).Error; err != nil {
			return err
		}
		for _, id := range ids {
			touched[id] = true
		}
		return nil
	}
	if err := apply(outcomes); err != nil {
		return nil, nil, err
	}
	pids := make([]string, len(outcomes))
	for i, o := range outcomes {
		pids[i] = o.PlatformID
	}
	var known []string
	if err := tx.WithContext(ctx).Raw(`SELECT platform_message_id FROM campaign_recipients WHERE organization_id = ? AND platform_message_id IN ?`,
		orgID, pids).Scan(&known).Error; err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, k := range known {
		seen[k] = true
	}
	var unknown, retry []*messaging.Outcome
	for _, o := range outcomes {
		if seen[o.PlatformID] {
			continue
		}
		id, err := uuid.Parse(strings.TrimPrefix(o.Callback, CallbackPrefix))
		if err != nil || !strings.HasPrefix(o.Callback, CallbackPrefix) {
			unknown = append(unknown, o)
			continue
		}
		res := tx.WithContext(ctx).Exec(`UPDATE campaign_recipients SET platform_message_id = ?, updated_at = now()
			WHERE id = ? AND organization_id = ? AND platform_message_id IS NULL`, o.PlatformID, id, orgID)
		if res.Error != nil {
			return nil, nil, res.Error
		}
		// Matched or not, apply again by provider id: when nothing matched, a
		// concurrent batch may have just set the id (it held the row).
		retry = append(retry, o)
	}
	if len(retry) > 0 {
		if err := apply(retry); err != nil {
			return nil, nil, err
		}
		ids := make([]string, len(retry))
		for i, o := range retry {
			ids[i] = o.PlatformID
		}
		var found []string
		if err := tx.WithContext(ctx).Raw(`SELECT platform_message_id FROM campaign_recipients WHERE organization_id = ? AND platform_message_id IN ?`,
			orgID, ids).Scan(&found).Error; err != nil {
			return nil, nil, err
		}
		for _, k := range found {
			seen[k] = true
		}
		for _, o := range retry {
			if !seen[o.PlatformID] {
				unknown = append(unknown, o)
			}
		}
	}
	after := func(ctx context.Context) {
		for id := range touched {
			s.RequestRecount(ctx, orgID, id)
		}
	}
	return unknown, after, nil
}

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
			restarted, err := s.transition(ctx, c.OrganizationID, c.ID, []string{models.CampaignSending}, "restart",
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
