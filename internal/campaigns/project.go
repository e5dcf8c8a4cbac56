package campaigns

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/webhooks"
	"wharf/models"
)

// A projected campaign (models.Campaign.Projected: a bulk message launched
// it) records campaign.changed (webhooks.EventCampaignChanged) in the
// events outbox in the transaction of each of its changes: a chunk's
// settled sends, provider statuses that moved its recipients, a recount.
// The outbox dispatches the event at least once to the projector (a
// webhooks.Subscriber, internal/integration/bulk), which reads the rows as they
// are then (Sends, Progress). Other campaigns record nothing and pay
// nothing: a lane knows its campaign's flag, and the statuses and
// recounts read it once per campaign and process (projectedCampaign).

// Outbox records a projected campaign's changes (webhooks.Service).
type Outbox interface {
	Record(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, event string, data any) (uuid.UUID, error)
	Publish(ctx context.Context, orgID uuid.UUID, ids ...uuid.UUID)
}

// Change is the data of a campaign.changed event. RecipientIDs and
// MessageIDs (provider ids) name the recipients whose sends may have
// changed (a hint: the projector reads them as they are now); Counted says
// that the campaign was recounted (its status and counters may have
// changed).
//
// Retried are the sends that a retry of the failed recipients is about to
// forget (their rows go back to pending, to be sent again): they are
// carried as they were, since no row holds them any more.
type Change struct {
	CampaignID   uuid.UUID   `json:"campaign_id"`
	Counted      bool        `json:"counted,omitempty"`
	RecipientIDs []uuid.UUID `json:"recipient_ids,omitempty"`
	MessageIDs   []string    `json:"message_ids,omitempty"`
	Retried      []Send      `json:"retried,omitempty"`
}

// recordChange records ch in tx when the service has an outbox (uuid.Nil
// otherwise); publish the id after the commit.
func (s *Service) recordChange(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, ch Change) (uuid.UUID, error) {
	if s.outbox == nil {
		return uuid.Nil, nil
	}
	return s.outbox.Record(ctx, tx, orgID, webhooks.EventCampaignChanged, ch)
}

// publishChange enqueues the dispatch of committed events.
func (s *Service) publishChange(ctx context.Context, orgID uuid.UUID, ids ...uuid.UUID) {
	if s.outbox != nil {
		s.outbox.Publish(context.WithoutCancel(ctx), orgID, ids...)
	}
}

// projectedCampaign tells whether a campaign of the organization is
// projected, read through db once per campaign and process: the flag is set
// at the launch and never changes.
func (s *Service) projectedCampaign(ctx context.Context, db *gorm.DB, orgID, id uuid.UUID) (bool, error) {
	if s.outbox == nil {
		return false, nil
	}
	if v, ok := s.projected.Load(id); ok {
		return v.(bool), nil
	}
	var rows []bool
	if err := db.WithContext(ctx).Raw(`SELECT projected FROM campaigns WHERE id = ? AND organization_id = ?`, id, orgID).Scan(&rows).Error; err != nil {
		return false, err
	}
	if len(rows) == 0 {
		return false, nil
	}
	if s.projectedSize.Add(1) > 100_000 { // bounded: the memory starts over
		s.projected.Clear()
		s.projectedSize.Store(0)
	}
	s.projected.Store(id, rows[0])
	return rows[0], nil
}

// Send is a campaign recipient's send the provider accepted, as the
// recipient is now: its provider id, status and error.
type Send struct {
	RecipientID       uuid.UUID              `json:"recipient_id"`
	PhoneNumber       string                 `json:"phone_number"` // E.164
	PlatformMessageID string                 `json:"platform_message_id"`
	Status            models.RecipientStatus `json:"status"`
	ErrorTitle        string                 `json:"error_title,omitempty"`
	ErrorDetail       string                 `json:"error_detail,omitempty"`
}

// sendColumns read a Send from campaign_recipients.
const sendColumns = `id AS recipient_id, phone_number, platform_message_id, status, error_title, error_detail`

// Sends answers the recipients of the campaign among recipientIDs and
// messageIDs (provider ids) that the provider accepted (those with a
// provider id), as they are now.
func (s *Service) Sends(ctx context.Context, orgID, campaignID uuid.UUID, recipientIDs []uuid.UUID, messageIDs []string) ([]Send, error) {
	if len(recipientIDs)+len(messageIDs) == 0 {
		return nil, nil
	}
	// IN over an empty list is not SQL: a value that matches nothing.
	ids := append([]uuid.UUID{uuid.Nil}, recipientIDs...)
	pids := append([]string{""}, messageIDs...)
	var out []Send
	err := s.db.WithContext(ctx).Raw(`SELECT `+sendColumns+` FROM campaign_recipients
		WHERE campaign_id = ? AND organization_id = ? AND platform_message_id IS NOT NULL AND (id IN ? OR platform_message_id IN ?)
		ORDER BY seq`, campaignID, orgID, ids, pids).Scan(&out).Error
	return out, err
}

// recordRetried records, in tx, the sends of a projected campaign's failed
// recipients that a retry is about to reset (Change.Retried): the projector
// can no longer read them from the rows. It answers the event to publish.
func (s *Service) recordRetried(ctx context.Context, tx *gorm.DB, c *models.Campaign) (uuid.UUID, error) {
	if !c.Projected || s.outbox == nil {
		return uuid.Nil, nil
	}
	var sends []Send
	if err := tx.WithContext(ctx).Raw(`SELECT `+sendColumns+` FROM campaign_recipients
		WHERE campaign_id = ? AND organization_id = ? AND status = 'failed' AND platform_message_id IS NOT NULL ORDER BY seq`, c.ID, c.OrganizationID).Scan(&sends).Error; err != nil {
		return uuid.Nil, err
	}
	if len(sends) == 0 {
		return uuid.Nil, nil
	}
	return s.recordChange(ctx, tx, c.OrganizationID, Change{CampaignID: c.ID, Retried: sends})
}
