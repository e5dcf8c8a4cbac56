package inbound

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are inbound's job handlers, which the worker registers: one
// contact's incoming messages (and an account's other events), one
// account's status batches, and the sweep of events whose task was lost.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.InboundProcess) error {
			return s.Process(ctx, p.OrganizationID, p.AccountID, p.ContactKey)
		}),
		jobs.Handle(func(ctx context.Context, p jobs.InboundStatuses) error {
			return s.ProcessStatuses(ctx, p.OrganizationID, p.AccountID)
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.InboundSweep) error {
			n, err := s.Sweep(ctx)
			if n > 0 {
				s.log.Warn("re-enqueued inbound events whose task was lost", "contacts", n)
			}
			return err
		}),
	}
}

// Schedules are inbound's periodic jobs, which the scheduler fires: the
// sweep finds events whose queue task was lost (Redis restarted without
// persistence, a crash between commit and enqueue).
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "inbound sweep", Spec: "@every 30s", Job: func(t time.Time) jobs.Payload {
			return jobs.InboundSweep{Tick: t.Truncate(30 * time.Second)}
		}},
	}
}
