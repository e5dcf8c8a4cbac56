package messaging

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are messaging's job handlers, which the worker registers: queued
// sends, media fetches, and the sweeps of both.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.MessageSend) error {
			return s.SendQueuedBatch(ctx, p.OrganizationID, p.MessageID, p.With, jobs.LastAttempt(ctx))
		}),
		jobs.Handle(func(ctx context.Context, p jobs.MediaFetch) error {
			return s.FetchMedia(ctx, p.OrganizationID, p.MessageID, jobs.LastAttempt(ctx))
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.MediaSweep) error {
			n, err := s.SweepMedia(ctx)
			if n > 0 {
				s.log.Warn("re-enqueued media fetches whose task was lost", "messages", n)
			}
			return err
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.MessageSweep) error {
			requeued, failed, err := s.SweepUnconfirmed(ctx)
			if requeued+failed > 0 {
				s.log.Warn("settled outbound messages", "requeued", requeued, "failed_unknown_outcome", failed)
			}
			return err
		}),
	}
}

// Schedules are messaging's periodic jobs, which the scheduler fires.
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "unconfirmed sends sweep", Spec: "@every 1m", Job: func(t time.Time) jobs.Payload {
			return jobs.MessageSweep{Tick: t.Truncate(time.Minute)}
		}},
		{Name: "media fetch sweep", Spec: "@every 5m", Job: func(t time.Time) jobs.Payload {
			return jobs.MediaSweep{Tick: t.Truncate(5 * time.Minute)}
		}},
	}
}
