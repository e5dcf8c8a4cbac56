package dataops

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"

	"wharf/jobs"
)

// Jobs are the imports' job handlers, which the worker registers: an
// import's run and the purge of imports past their retention.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.HandleTask(func(ctx context.Context, p jobs.Import, t *asynq.Task) error {
			// Progress and then the result go to the task's result (the asynq UI).
			_, err := s.RunImport(ctx, p.OrganizationID, p.ImportID, t.ResultWriter())
			if err != nil && (jobs.LastAttempt(ctx) || errors.Is(err, asynq.SkipRetry)) {
				if ferr := s.FailImport(context.WithoutCancel(ctx), p.OrganizationID, p.ImportID, err); ferr != nil {
					s.log.Warn("cannot record a failed import", "import_id", p.ImportID, "error", ferr)
				}
			}
			return err
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.ImportPurge) error {
			n, err := s.PurgeImports(ctx)
			if n > 0 {
				s.log.Info("deleted imports past their retention", "imports", n)
			}
			return err
		}),
	}
}

// Schedules are the imports' periodic jobs, which the scheduler fires.
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "purge imports", Spec: "@every 1h", Job: func(t time.Time) jobs.Payload {
			return jobs.ImportPurge{Tick: t.Truncate(time.Hour)}
		}},
	}
}
