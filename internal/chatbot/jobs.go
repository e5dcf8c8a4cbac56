package chatbot

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are the chatbot's job handlers, which the worker registers: a
// contact's evaluation, and the sweep of evaluations whose task was lost.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.ChatbotEvaluate) error {
			return s.Evaluate(ctx, p.OrganizationID, p.ContactID)
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.ChatbotSweep) error {
			n, err := s.Sweep(ctx)
			if n > 0 {
				s.log.Warn("re-enqueued chatbot evaluations whose task was lost", "contacts", n)
			}
			return err
		}),
	}
}

// Schedules are the chatbot's periodic jobs, which the scheduler fires.
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "chatbot sweep", Spec: "@every 30s", Job: func(t time.Time) jobs.Payload {
			return jobs.ChatbotSweep{Tick: t.Truncate(30 * time.Second)}
		}},
	}
}
