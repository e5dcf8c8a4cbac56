package notify

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are the notifications' job handlers, which the worker registers: a
// send of the ledger, a Scheduler Event notification's run, and the
// minute's tick.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.NotifySend) error {
			return s.Deliver(ctx, p.OrganizationID, p.SendID)
		}),
		jobs.Handle(func(ctx context.Context, p jobs.NotifyRun) error {
			return s.Run(ctx, p.OrganizationID, p.Notification, p.Tick)
		}),
		jobs.Handle(func(ctx context.Context, p jobs.NotifyTick) error {
			_, err := s.Tick(ctx, p.Tick)
			return err
		}),
	}
}

// Schedules are the notifications' periodic jobs, which the scheduler
// fires: Scheduler Event notifications (All = every minute) and the sweep
// of their send ledger, at second 0 of every minute (a minute is the tick
// Scheduler Event schedules are evaluated at).
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "notifications", Spec: "* * * * *", Job: func(t time.Time) jobs.Payload {
			return jobs.NotifyTick{Tick: t.Truncate(time.Minute)}
		}},
	}
}
