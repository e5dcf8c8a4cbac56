package bulk

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"

	"wharf/internal/campaigns"
	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/models"
)

// bulkFor finds the bulk message of a campaign (by its indexed campaign
// field): its name and whether it is cancelled; "" for a campaign that is
// no bulk message (or an organization without the DocType).
func (s *Service) bulkFor(ctx context.Context, orgID, campaignID uuid.UUID) (name string, cancelled bool, err error) {
	filters, _ := json.Marshal([][]string{{"campaign", "=", campaignID.String()}})
	rows, err := s.frame.List(docframe.WithoutBuiltIn(ctx), system, orgID, BulkMessage, docframe.ListArgs{Fields: `["name", "docstatus"]`,
		Filters: string(filters), Limit: 1})
	if apperr.Is(err, apperr.NotFound) {
		return "", false, nil
	}
	if err != nil || len(rows) == 0 {
		return "", false, err
	}
	row, _ := rows[0].(map[string]any)
	name, _ = row["name"].(string)
	return name, fmt.Sprint(row["docstatus"]) == "2", nil
}

// Progress is a bulk message's progress as bulk_progress answers it.
type Progress struct {
	Total   int64   `json:"total"`
	Sent    int64   `json:"sent"`
	Failed  int64   `json:"failed"`
	Queued  int64   `json:"queued"`
	Unknown int64   `json:"unknown"`
	Percent float64 `json:"percent"`
	Status  string  `json:"status"`
}

// sync counts the campaign's recipients now and writes the bulk message's
// status and counters: sent are recipients the provider accepted and that
// did not fail since, failed those that failed (at the send or by a later
// status), queued those not sent yet, unknown those whose send's outcome
// nobody knows (a worker died during it).
func (s *Service) sync(ctx context.Context, orgID uuid.UUID, name string, campaignID uuid.UUID) (*Progress, error) {
	p, err := s.campaigns.Progress(ctx, orgID, campaignID)
	if err != nil {
		return nil, err
	}
	out := &Progress{Total: p.Total, Sent: p.Accepted, Failed: p.Failed, Queued: p.Pending + p.Sending, Unknown: p.Unknown,
		Status: statusOf(p)}
	if p.Total > 0 {
		out.Percent = math.Round(float64(p.Total-out.Queued)*10000/float64(p.Total)) / 100
	}
	return out, s.frame.SetValues(ctx, nil, orgID, BulkMessage, name, map[string]any{"status": out.Status,
		"sent_count": out.Sent, "failed_count": out.Failed, "recipient_count": out.Total})
}

// statusOf is the bulk message status of a campaign's progress.
func statusOf(p *campaigns.Progress) string {
	switch p.Campaign.Status {
	case models.CampaignSending:
		if p.Accepted+p.Failed+p.Unknown+p.Skipped == 0 {
			return StatusQueued
		}
		return StatusInProgress
	case models.CampaignCompleted:
		if p.Failed+p.Unknown > 0 {
			return StatusPartiallyFailed
		}
		return StatusCompleted
	case models.CampaignPaused:
		return StatusPaused
	case models.CampaignCancelled:
		return StatusCancelled
	}
	return StatusQueued // draft, scheduled
}
