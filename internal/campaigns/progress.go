package campaigns

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wharf/models"
)

// Progress is a live view of a campaign's recipients.
type Progress struct {
	Campaign        *models.Campaign
	Pending         int64
	Sending         int64
	Sent            int64 // accepted by the provider (whatever happened next)
	Accepted        int64 // accepted and not failed since: sent, delivered or read now
	Delivered       int64
	Read            int64
	Failed          int64
	Unknown         int64
	Skipped         int64 // not sent on purpose: opted out of marketing
	Total           int64
	RecentPerSecond float64 // claims per second over the last 10 s
}

// Progress counts the recipients now (not the stored counters, which trail
// by up to CounterInterval).
func (s *Service) Progress(ctx context.Context, orgID, id uuid.UUID) (*Progress, error) {
	c, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	p := &Progress{Campaign: c}
	var recent int64
	err = s.db.WithContext(ctx).Raw(`SELECT
		count(*) FILTER (WHERE status = 'pending') AS pending,
		count(*) FILTER (WHERE status = 'sending') AS sending,
		count(*) FILTER (WHERE sent_at IS NOT NULL) AS sent,
		count(*) FILTER (WHERE status IN ('sent', 'delivered', 'read')) AS accepted,
		count(*) FILTER (WHERE delivered_at IS NOT NULL) AS delivered,
		count(*) FILTER (WHERE read_at IS NOT NULL) AS read,
		count(*) FILTER (WHERE status = 'failed') AS failed,
		count(*) FILTER (WHERE status = 'unknown') AS unknown,
		count(*) FILTER (WHERE status = 'skipped') AS skipped,
		count(*) AS total,
		count(*) FILTER (WHERE send_started_at > now() - interval '10 seconds') AS recent
		FROM campaign_recipients WHERE campaign_id = ?`, id).Row().Scan(&p.Pending, &p.Sending, &p.Sent, &p.Accepted, &p.Delivered, &p.Read,
		&p.Failed, &p.Unknown, &p.Skipped, &p.Total, &recent)
	p.RecentPerSecond = float64(recent) / 10
	return p, err
}

// Counted is the progress as the campaign's maintained counters tell it
// (recomputed at most once per CAMPAIGN_COUNTER_INTERVAL): what a progress
// stream shows every second without counting the recipients each time.
func Counted(c *models.Campaign) *Progress {
	return &Progress{Campaign: c, Pending: int64(c.PendingCount), Sending: int64(c.SendingCount), Sent: int64(c.SentCount),
		Delivered: int64(c.DeliveredCount), Read: int64(c.ReadCount), Failed: int64(c.FailedCount), Unknown: int64(c.UnknownCount),
		Skipped: int64(c.SkippedCount), Total: int64(c.TotalRecipients)}
}

// RateWindow estimates sends per second from successive progress samples
// over the last 10 seconds.
type RateWindow struct {
	samples []rateSample
}

type rateSample struct {
	at   time.Time
	done int64 // recipients no longer pending
}

// Observe adds a sample and fills p.RecentPerSecond.
func (w *RateWindow) Observe(p *Progress, now time.Time) {
	w.samples = append(w.samples, rateSample{at: now, done: p.Total - p.Pending})
	for len(w.samples) > 1 && now.Sub(w.samples[0].at) > 10*time.Second {
		w.samples = w.samples[1:]
	}
	first := w.samples[0]
	if d := now.Sub(first.at).Seconds(); d > 0 {
		p.RecentPerSecond = float64(p.Total-p.Pending-first.done) / d
	}
}
