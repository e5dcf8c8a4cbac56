package campaigns

import (
	"context"

	"github.com/google/uuid"

	"wharf/models"
)

// Observer learns what happens to campaigns, after the commit, for callers
// whose own records follow a campaign (the integration's bulk messages).
// Calls are at most once: a crash between the commit and the call loses
// one. A lost CampaignCounted is made up by the next recount, which
// carries the whole state again (the sweep recounts every sending
// campaign); a lost CampaignSent is lost.
type Observer interface {
	// CampaignCounted follows every recount, with the campaign as stored
	// by it (counters and status, completed included).
	CampaignCounted(ctx context.Context, c *models.Campaign)
	// CampaignSent follows each chunk of sends the provider accepted.
	CampaignSent(ctx context.Context, c *models.Campaign, sent []Sent)
}

// Sent is one recipient's send the provider accepted.
type Sent struct {
	RecipientID       uuid.UUID
	PhoneNumber       string // E.164
	PlatformMessageID string
	Status            models.RecipientStatus // the recipient's status when the observer is told (sent, or later if a webhook came first)
}

// CurrentStatuses sets each send's Status to its recipient's status as it
// is now: a status webhook may have overtaken the observer's call. An
// observer that records sends asks for it (one query per chunk), only for
// the campaigns it follows.
func (s *Service) CurrentStatuses(ctx context.Context, sent []Sent) error {
	ids := make([]uuid.UUID, len(sent))
	for i, m := range sent {
		ids[i] = m.RecipientID
	}
	var now []struct {
		ID     uuid.UUID
		Status models.RecipientStatus
	}
	if err := s.db.WithContext(ctx).Raw(`SELECT id, status FROM campaign_recipients WHERE id IN ?`, ids).Scan(&now).Error; err != nil {
		return err
	}
	byID := make(map[uuid.UUID]models.RecipientStatus, len(now))
	for _, r := range now {
		byID[r.ID] = r.Status
	}
	for i := range sent {
		if st := byID[sent[i].RecipientID]; st != "" {
			sent[i].Status = st
		}
	}
	return nil
}

// CampaignsBinder is an observer that also drives campaigns (a bulk
// message launches and retries its campaign). The two need each other;
// NewService breaks the cycle by handing itself to such an observer before
// it returns, so the wiring sets nothing afterwards.
type CampaignsBinder interface {
	BindCampaigns(*Service)
}
