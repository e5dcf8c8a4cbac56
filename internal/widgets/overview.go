package widgets

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// RateDays is how many days (today included) the overview's delivery and
// read rates cover.
const RateDays = 7

// Overview is the dashboard's fixed tiles: what an organization's people
// want to see without setting anything up. "Today" and the rates' days are
// days of the organization's timezone (the widgets' periods are UTC days).
type Overview struct {
	Timezone string
	// Today is the start of today in the organization's timezone.
	Today time.Time
	// MessagesInToday and MessagesOutToday count the messages received and
	// sent (queued ones included) since the start of today.
	MessagesInToday, MessagesOutToday int64
	// ActiveConversations counts the contacts with a message, either way,
	// in the last 24 hours.
	ActiveConversations int64
	// WaitingTransfers counts the active agent transfers no agent has yet.
	WaitingTransfers int64
	// CampaignsRunning counts the campaigns sending now.
	CampaignsRunning int64
	// RatesFrom is the first of the RateDays days the rates cover.
	RatesFrom time.Time
	// Sent counts the outgoing messages of those days the provider took
	// (sent, delivered, read or failed; not those still queued), Delivered
	// those delivered or read, Read those read.
	Sent, Delivered, Read int64
	// DeliveryRate and ReadRate are Delivered and Read as percents of Sent
	// (0 when nothing was sent), to two decimals.
	DeliveryRate, ReadRate float64
}

// Overview computes the fixed tiles of an organization's dashboard: four
// short statements over indexed rows (messages by organization and time,
// the transfer queue, the sending campaigns).
func (s *Service) Overview(ctx context.Context, orgID uuid.UUID) (*Overview, error) {
	db := s.db.WithContext(ctx)
	var tz string
	if s.timezones != nil {
		var err error
		if tz, err = s.timezones.Timezone(ctx, orgID); err != nil {
			return nil, fmt.Errorf("overview timezone: %w", err)
		}
	}
	loc, err := time.LoadLocation(tz)
	if tz == "" || err != nil {
		tz, loc = "UTC", time.UTC
	}
	now := s.now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	o := &Overview{Timezone: tz, Today: today, RatesFrom: today.AddDate(0, 0, -(RateDays - 1))}
	dayAgo := now.Add(-24 * time.Hour)
	since := o.RatesFrom
	if dayAgo.Before(since) {
		since = dayAgo
	}

	var m struct{ InToday, OutToday, Active, Sent, Delivered, Read int64 }
	if err := db.Raw(`SELECT
			count(*) FILTER (WHERE created_at >= @today AND direction = 'incoming') AS in_today,
			count(*) FILTER (WHERE created_at >= @today AND direction = 'outgoing') AS out_today,
			count(DISTINCT contact_id) FILTER (WHERE created_at >= @day_ago) AS active,
			count(*) FILTER (WHERE created_at >= @rates_from AND direction = 'outgoing' AND status IN ('sent', 'delivered', 'read', 'failed')) AS sent,
			count(*) FILTER (WHERE created_at >= @rates_from AND direction = 'outgoing' AND status IN ('delivered', 'read')) AS delivered,
			count(*) FILTER (WHERE created_at >= @rates_from AND direction = 'outgoing' AND status = 'read') AS read
		FROM messages WHERE organization_id = @org AND created_at >= @since`,
		map[string]any{"org": orgID, "today": today.UTC(), "day_ago": dayAgo.UTC(), "rates_from": o.RatesFrom.UTC(), "since": since.UTC()}).
		Scan(&m).Error; err != nil {
		return nil, fmt.Errorf("overview messages: %w", err)
	}
	o.MessagesInToday, o.MessagesOutToday, o.ActiveConversations = m.InToday, m.OutToday, m.Active
	o.Sent, o.Delivered, o.Read = m.Sent, m.Delivered, m.Read
	o.DeliveryRate = round2(share(float64(m.Delivered), float64(m.Sent)))
	o.ReadRate = round2(share(float64(m.Read), float64(m.Sent)))

	if err := db.Raw(`SELECT count(*) FROM agent_transfers WHERE organization_id = ? AND status = 'active' AND agent_id IS NULL`,
		orgID).Scan(&o.WaitingTransfers).Error; err != nil {
		return nil, fmt.Errorf("overview transfers: %w", err)
	}
	if err := db.Raw(`SELECT count(*) FROM campaigns WHERE organization_id = ? AND status = 'sending'`,
		orgID).Scan(&o.CampaignsRunning).Error; err != nil {
		return nil, fmt.Errorf("overview campaigns: %w", err)
	}
	return o, nil
}
