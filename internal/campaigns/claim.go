package campaigns

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/metrics"
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

// settlement is the outcome of one claimed recipient's send, recorded with
// the rest of its chunk by settle.
type settlement struct {
	ID uuid.UUID `json:"id"`
	// Kind is what happens to the recipient: "sent" (the provider accepted
	// it), "failed", "skipped" (not sent on purpose: an opted-out contact)
	// or "unknown" (models.RecipientUnknown: nobody knows whether the
	// provider has it), or "release" (back to pending: the
	// provider certainly did not take it).
	Kind       string `json:"kind"`
	PlatformID string `json:"platform_message_id,omitempty"`
	// Attempted counts the send as a real attempt (a request that reached
	// the provider and failed); throttles and waits are not attempts.
	Attempted   bool   `json:"attempted"`
	ErrorCode   *int   `json:"error_code"`
	ErrorTitle  string `json:"error_title"`
	ErrorDetail string `json:"error_detail"`
}

// Settlement kinds besides the statuses they set (failed, unknown).
const (
	settleSent    = "sent"
	settleRelease = "release"
)

func sentTo(id uuid.UUID, platformID string) settlement {
	return settlement{ID: id, Kind: settleSent, PlatformID: platformID}
}

// failedTo is a send that certainly failed (or, with models.RecipientUnknown,
// one whose outcome nobody knows); attempted says whether a request reached
// the provider.
func failedTo(id uuid.UUID, status models.RecipientStatus, attempted bool, code *int, title, detail string) settlement {
	return settlement{ID: id, Kind: string(status), Attempted: attempted, ErrorCode: code, ErrorTitle: apperr.Clip(title, 300),
		ErrorDetail: apperr.Clip(detail, 1000)}
}

// released gives a claimed recipient back to pending; attempt counts it as a
// failed attempt (provider trouble).
func released(id uuid.UUID, attempt bool) settlement {
	return settlement{ID: id, Kind: settleRelease, Attempted: attempt}
}

// settleSQL records a chunk's outcomes in one statement (the JSON of
// []settlement, sorted by id, parameter @outcomes).
//
//   - sent: a status webhook may have settled the recipient already (its
//     answer came back before ours was recorded), so only a recipient still
//     sending (or unknown) becomes sent; the provider id and sent_at are
//     filled when missing, whatever the status.
//   - failed, skipped, unknown, release: only a recipient still sending
//     moves; a release clears the claim; skipped keeps its reason in the
//     error fields.
//
// As in the status applier, the outcome is computed in SET and WHERE from
// the row being updated: a status batch that changed the row meanwhile is
// seen. The outcomes come sorted by id and drive a nested loop over the
// primary key, so rows are locked in id order, the order the status
// applier locks them in; a deadlock all the same is retried (retryDB).
// LIMIT @n (the number of outcomes) tells the planner how few they are:
// left at its guess for a set-returning function (100 rows), it chose to
// read every recipient of the table and hash-join them when the table was
// small enough (a first campaign of 20,000: 1,095 pages read per chunk of
// 16, docs/BENCHMARKS.md), which also locked them in table order.
const settleSQL = `
WITH v AS (
    SELECT * FROM jsonb_to_recordset(CAST(@outcomes AS jsonb)) AS x(id uuid, kind text, platform_message_id text, attempted boolean,
        error_code int, error_title text, error_detail text)
    LIMIT @n
)
UPDATE campaign_recipients r SET
    status = CASE
        WHEN v.kind = 'sent' THEN (CASE WHEN r.status IN ('sending', 'unknown') THEN 'sent' ELSE r.status END)
        WHEN v.kind = 'release' THEN 'pending'
        ELSE v.kind END,
    platform_message_id = CASE WHEN v.kind = 'sent' THEN COALESCE(r.platform_message_id, v.platform_message_id) ELSE r.platform_message_id END,
    sent_at         = CASE WHEN v.kind = 'sent' THEN COALESCE(r.sent_at, now()) ELSE r.sent_at END,
    failed_at       = CASE WHEN v.kind = 'failed' THEN now() ELSE r.failed_at END,
    error_code      = CASE WHEN v.kind IN ('failed', 'unknown', 'skipped') THEN v.error_code ELSE r.error_code END,
    error_title     = CASE WHEN v.kind IN ('failed', 'unknown', 'skipped') THEN v.error_title ELSE r.error_title END,
    error_detail    = CASE WHEN v.kind IN ('failed', 'unknown', 'skipped') THEN v.error_detail ELSE r.error_detail END,
    attempts        = r.attempts + CASE WHEN v.attempted THEN 1 ELSE 0 END,
    claim_id        = CASE WHEN v.kind = 'release' THEN NULL ELSE r.claim_id END,
    send_started_at = CASE WHEN v.kind = 'release' THEN NULL ELSE r.send_started_at END,
    updated_at      = now()
FROM v
WHERE r.id = v.id AND (v.kind = 'sent' OR r.status = 'sending')`

// settle records the outcomes of a chunk's sends in one statement, retried
// while the database is away: the provider has the messages that were sent,
// and the alternative is recipients that look unsent. It is not cancelled
// with the lane. When it cannot be recorded at all, the recipients stay
// sending and the sweep calls them unknown (never resent); provider
// statuses settle those the provider accepted.
func (s *Service) settle(ctx context.Context, outcomes []settlement) {
	s.settleFor(ctx, nil, outcomes)
}

// settleFor is settle for the chunk of campaign c (nil: no campaign's): a
// projected campaign's accepted sends also record campaign.changed in the
// statement's transaction (project.go); any other chunk is the one
// statement.
func (s *Service) settleFor(ctx context.Context, c *models.Campaign, outcomes []settlement) {
	if len(outcomes) == 0 {
		return
	}
	slices.SortFunc(outcomes, func(a, b settlement) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	var change *Change
	if c != nil && c.Projected {
		for _, o := range outcomes {
			if o.Kind == settleSent {
				if change == nil {
					change = &Change{CampaignID: c.ID}
				}
				change.RecipientIDs = append(change.RecipientIDs, o.ID)
			}
		}
	}
	var event uuid.UUID
	body, err := json.Marshal(outcomes)
	if err == nil {
		err = s.retryDB(context.WithoutCancel(ctx), "record campaign sends", func(ctx context.Context) error {
			args := map[string]any{"outcomes": string(body), "n": len(outcomes)}
			if change == nil {
				return s.db.WithContext(ctx).Exec(settleSQL, args).Error
			}
			return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec(settleSQL, args).Error; err != nil {
					return err
				}
				var err error
				event, err = s.recordChange(ctx, tx, c.OrganizationID, *change)
				return err
			})
		})
	}
	if err != nil {
		s.log.Error("cannot record campaign sends; provider statuses or the sweeper will settle them", "recipients", len(outcomes), "error", err)
		return
	}
	if change != nil {
		s.publishChange(ctx, c.OrganizationID, event)
	}
	counts := map[metrics.SendOutcome]int{}
	for _, o := range outcomes {
		switch o.Kind {
		case settleSent:
			counts[metrics.SendSent]++
		case settleRelease:
			counts[metrics.SendReleased]++
		default: // the statuses are the outcomes' names: failed, skipped, unknown
			counts[metrics.SendOutcome(o.Kind)]++
		}
	}
	for o, n := range counts {
		s.metrics.CampaignSends(o, n)
	}
}
