package webhooks

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are the outbound webhooks' job handlers, which the worker
// registers: an event's dispatch to the subscribers (the framework's
// projector) and the webhooks that listen, one delivery, and the sweep of
// events whose dispatch was lost.
func (s *Service) Jobs(subscribers ...Subscriber) []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.WebhookDispatch) error {
			return s.Dispatch(ctx, p.OrganizationID, p.EventID, subscribers...)
		}),
		jobs.Handle(func(ctx context.Context, p jobs.WebhookDeliver) error {
			return s.Deliver(ctx, p.OrganizationID, p.WebhookID, p.EventID, p.Attempt)
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.EventsSweep) error {
			n, err := s.SweepUndispatched(ctx)
			if n > 0 {
				s.log.Warn("re-enqueued webhook events whose dispatch was lost", "events", n)
			}
			return err
		}),
	}
}

// Schedules are the outbound webhooks' periodic jobs, which the scheduler
// fires.
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "webhook events sweep", Spec: "@every 30s", Job: func(t time.Time) jobs.Payload {
			return jobs.EventsSweep{Tick: t.Truncate(30 * time.Second)}
		}},
	}
}
