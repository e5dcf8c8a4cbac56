package campaigns

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// ReplyWindow is how long after its send a recipient's message counts as a
// reply to the campaign.
const ReplyWindow = 72 * time.Hour

// repliesFresh is how old a campaign's reply count may be when its report
// is read; older, the report counts again. Short, since a person reading a
// report expects the replies of the last minutes; long enough that a page
// refreshed in a loop or many readers of one campaign count it at most
// every ten seconds.
const repliesFresh = 10 * time.Second

// firstReply is the SQL of a recipient's (alias r) first incoming message
// within ReplyWindow after its send: the contact of the same number in the
// organization (unique), its messages by the (contact_id, occurred_at)
// index. NULL when it did not answer, or was not sent. The provider dates
// messages to the second, so a message of the send's own second counts:
// compared to the send's exact time, a quick answer would be missed.
const firstReply = `(SELECT min(m.occurred_at) FROM contacts rc JOIN messages m ON m.contact_id = rc.id
	WHERE rc.organization_id = r.organization_id AND rc.phone_number = r.phone_number
	  AND m.direction = 'incoming' AND m.occurred_at >= date_trunc('second', r.sent_at)
	  AND m.occurred_at <= r.sent_at + interval '72 hours')`

// CountReplies counts the campaign's recipients who answered within the
// window and keeps the count on the campaign (replied_count), for the
// lists. It reads each sent recipient's contact and messages by index:
// about a second for 100,000 recipients, which is why the lists show the
// kept count and the report and the replies sweep refresh it.
func (s *Service) CountReplies(ctx context.Context, orgID, id uuid.UUID) (*models.Campaign, error) {
	var counted []models.Campaign
	err := s.db.WithContext(ctx).Raw(`UPDATE campaigns SET replied_count = (
		    SELECT count(*) FROM campaign_recipients r WHERE r.campaign_id = campaigns.id AND r.sent_at IS NOT NULL
		       AND `+firstReply+` IS NOT NULL),
		  replies_counted_at = now()
		WHERE id = ? AND organization_id = ? RETURNING *`, id, orgID).Scan(&counted).Error
	if err != nil {
		return nil, err
	}
	if len(counted) == 0 {
		return nil, apperr.NotFoundf("campaign not found")
	}
	return &counted[0], nil
}

// Report returns the campaign with a reply count at most ten seconds old
// (counted now when it is older and the campaign has sent anything).
func (s *Service) Report(ctx context.Context, orgID, id uuid.UUID) (*models.Campaign, error) {
	c, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if c.StartedAt == nil || (c.RepliesCountedAt != nil && s.now().Sub(*c.RepliesCountedAt) < repliesFresh) {
		return c, nil
	}
	return s.CountReplies(ctx, orgID, id)
}

// SweepReplies refreshes the reply counts of the campaigns that can still
// receive replies: started, and not ended more than the window ago (a
// campaign still sending counts too). The most recently started first, at
// most 100 a sweep.
func (s *Service) SweepReplies(ctx context.Context) (int, error) {
	var due []models.Campaign
	err := s.db.WithContext(ctx).Select("id", "organization_id").
		Where("started_at IS NOT NULL AND sent_count > 0 AND COALESCE(completed_at, cancelled_at, now()) > ?", s.now().Add(-ReplyWindow-10*time.Minute)).
		Order("started_at DESC").Limit(100).Find(&due).Error
	if err != nil {
		return 0, err
	}
	for _, c := range due {
		if _, err := s.CountReplies(ctx, c.OrganizationID, c.ID); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// fillReplies sets RepliedAt on the recipients (a page, an export's
// chunk): one query by their ids.
func (s *Service) fillReplies(ctx context.Context, db *gorm.DB, recs []models.CampaignRecipient) error {
	ids := make([]uuid.UUID, 0, len(recs))
	for i := range recs {
		if recs[i].SentAt != nil {
			ids = append(ids, recs[i].ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var rows []struct {
		ID        uuid.UUID
		RepliedAt *time.Time
	}
	if err := db.WithContext(ctx).Raw(`SELECT r.id, `+firstReply+` AS replied_at FROM campaign_recipients r WHERE r.id IN ?`, ids).
		Scan(&rows).Error; err != nil {
		return err
	}
	at := make(map[uuid.UUID]*time.Time, len(rows))
	for _, r := range rows {
		at[r.ID] = r.RepliedAt
	}
	for i := range recs {
		recs[i].RepliedAt = at[recs[i].ID]
	}
	return nil
}
