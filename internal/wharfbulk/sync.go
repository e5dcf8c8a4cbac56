package wharfbulk

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/campaigns"
	"wharf/internal/docframe"
	"wharf/models"
)

// bulkFor finds the bulk message of a campaign (by its indexed campaign
// field): its name and whether it is cancelled, or "" for a campaign that is no bulk
// message (or an organization without the DocType).
func (s *Service) bulkFor(ctx context.Context, orgID, campaignID uuid.UUID) (string, bool) {
	if _, no := s.notBulk.Load(campaignID); no {
		return "", false
	}
	filters, _ := json.Marshal([][]string{{"campaign", "=", campaignID.String()}})
	rows, err := s.frame.List(docframe.WithoutBuiltIn(ctx), system, orgID, BulkMessage, docframe.ListArgs{Fields: `["name", "docstatus"]`,
		Filters: string(filters), Limit: 1})
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return "", false
	}
	if len(rows) == 0 {
		// A bulk message's campaign is created in the document's own
		// transaction, before any lane runs: a campaign observed without one
		// never gets one. Remembering that keeps every other campaign's
		// sends free of this lookup (bounded: the memory starts over).
		if s.notBulkSize.Add(1) > 100_000 {
			s.notBulk.Clear()
			s.notBulkSize.Store(0)
		}
		s.notBulk.Store(campaignID, struct{}{})
		return "", false
	}
	row, _ := rows[0].(map[string]any)
	name, _ := row["name"].(string)
	return name, fmt.Sprint(row["docstatus"]) == "2"
}

// CampaignCounted brings a bulk message up to date with its campaign after
// each recount (campaigns.Observer): the document's counters trail the
// sends by at most CAMPAIGN_COUNTER_INTERVAL.
func (s *Service) CampaignCounted(ctx context.Context, c *models.Campaign) {
	name, cancelled := s.bulkFor(ctx, c.OrganizationID, c.ID)
	if name == "" || cancelled {
		return // a cancelled bulk message stays Cancelled
	}
	if _, err := s.sync(ctx, c.OrganizationID, name, c.ID); err != nil {
		s.log.Warn("cannot update a bulk message from its campaign", "bulk_message", name, "campaign_id", c.ID, "error", err)
	}
}

// CampaignSent records a bulk message's accepted sends as Platform
// Messages through the Recorder (campaigns.Observer).
func (s *Service) CampaignSent(ctx context.Context, c *models.Campaign, sent []campaigns.Sent) {
	if s.recorder == nil {
		return
	}
	name, _ := s.bulkFor(ctx, c.OrganizationID, c.ID)
	if name == "" {
		return
	}
	if err := s.campaigns.CurrentStatuses(ctx, sent); err != nil {
		s.log.Warn("cannot read a bulk message's send statuses; recorded as sent", "bulk_message", name, "error", err)
	}
	recorded := make([]string, len(sent))
	for i, m := range sent {
		s.recorder.RecordBulkSend(ctx, c.OrganizationID, name, m.PhoneNumber, m.PlatformMessageID, string(m.Status))
		recorded[i] = string(m.Status)
	}
	// A status applied to the campaign between the read above and a
	// record's commit found no document: read again now that every record
	// is committed, and carry over what moved. A status applied after this
	// read finds its document.
	if err := s.campaigns.CurrentStatuses(ctx, sent); err != nil {
		return
	}
	for i, m := range sent {
		if string(m.Status) != recorded[i] {
			s.recorder.BulkSendStatus(ctx, c.OrganizationID, m.PlatformMessageID, string(m.Status))
		}
	}
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
