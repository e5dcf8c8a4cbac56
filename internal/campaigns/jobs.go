package campaigns

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are the campaigns' job handlers, which the worker registers: lanes
// (on the campaigns queue, served by their own pool), recounts, the start
// of due campaigns, the replies' count and the sweep.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.CampaignLane) error {
			return s.RunLane(ctx, p.OrganizationID, p.CampaignID, p.Generation)
		}),
		jobs.Handle(func(ctx context.Context, p jobs.CampaignRecount) error {
			return s.Recount(ctx, p.OrganizationID, p.CampaignID)
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.CampaignStartDue) error {
			// Recurring campaigns' due occurrences first: each creates a run
			// scheduled for now, which StartDue below starts in this tick.
			if n, err := s.FireDue(ctx); err != nil {
				return err
			} else if n > 0 {
				s.log.Info("recurring campaigns' occurrences fired", "count", n)
			}
			n, err := s.StartDue(ctx)
			if n > 0 {
				s.log.Info("scheduled campaigns started", "count", n)
			}
			return err
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.CampaignReplies) error {
			_, err := s.SweepReplies(ctx)
			return err
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.CampaignSweep) error {
			res, err := s.Sweep(ctx)
			if res != nil && res.Unknown+int64(res.Restarted) > 0 {
				s.log.Warn("campaign sweep", "recipients_unknown", res.Unknown, "campaigns_restarted", res.Restarted)
			}
			return err
		}),
	}
}

// Schedules are the campaigns' periodic jobs, which the scheduler fires;
// sweep is CAMPAIGN_SWEEP_INTERVAL.
func Schedules(sweep time.Duration) []jobs.Schedule {
	return []jobs.Schedule{
		// Scheduled campaigns start within a second or two of their time.
		{Name: "start due campaigns", Spec: "@every 1s", Job: func(t time.Time) jobs.Payload {
			return jobs.CampaignStartDue{Tick: t.Truncate(time.Second)}
		}},
		{Name: "campaign sweep", Spec: "@every " + sweep.String(), Job: func(t time.Time) jobs.Payload {
			return jobs.CampaignSweep{Tick: t.Truncate(sweep)}
		}},
		// Replies to campaigns arrive for 72 hours after their sends; the
		// lists show the count this keeps fresh.
		{Name: "campaign replies", Spec: "@every 5m", Job: func(t time.Time) jobs.Payload {
			return jobs.CampaignReplies{Tick: t.Truncate(5 * time.Minute)}
		}},
	}
}
