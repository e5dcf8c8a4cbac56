package messages

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are the messaging integration's job handlers, which the worker
// registers: a Platform Template's submission to the provider, and the
// sweep of templates whose submission was lost.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.WharfTemplateSubmit) error {
			return s.SubmitTemplate(ctx, p.OrganizationID, p.Name)
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.WharfSweep) error {
			_, err := s.SweepUnsubmitted(ctx)
			return err
		}),
	}
}

// Schedules are the messaging integration's periodic jobs, which the
// scheduler fires.
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "unsubmitted templates sweep", Spec: "@every 1m", Job: func(t time.Time) jobs.Payload {
			return jobs.WharfSweep{Tick: t.Truncate(time.Minute)}
		}},
	}
}
