package campaigns

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/live"
	"wharf/models"
)

// LiveProgress is the data of a campaign.progress event: the campaign's
// maintained counters and status, in the shape of GET
// /api/campaigns/{id}/progress (without its sends_per_second, which a
// client derives from consecutive events).
type LiveProgress struct {
	ID          uuid.UUID             `json:"id"`
	Status      models.CampaignStatus `json:"status"`
	Total       int64                 `json:"total"`
	Pending     int64                 `json:"pending"`
	Sending     int64                 `json:"sending"`
	Sent        int64                 `json:"sent"`
	Delivered   int64                 `json:"delivered"`
	Read        int64                 `json:"read"`
	Failed      int64                 `json:"failed"`
	Unknown     int64                 `json:"unknown"`
	Skipped     int64                 `json:"skipped"`
	StartedAt   *time.Time            `json:"started_at"`
	CompletedAt *time.Time            `json:"completed_at"`
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// announce publishes c's progress as stored now (after a recount or a
// change of status), to the readers of campaigns.
func (s *Service) announce(ctx context.Context, c *models.Campaign) {
	p := Counted(c)
	s.live.Publish(ctx, c.OrganizationID, live.New(live.CampaignProgress, LiveProgress{ID: c.ID, Status: c.Status, Total: p.Total,
		Pending: p.Pending, Sending: p.Sending, Sent: p.Sent, Delivered: p.Delivered, Read: p.Read, Failed: p.Failed, Unknown: p.Unknown,
		Skipped: p.Skipped, StartedAt: utcPtr(c.StartedAt), CompletedAt: utcPtr(c.CompletedAt)}, live.Audience{AnyPerm: []string{"campaigns:read"}}))
}
