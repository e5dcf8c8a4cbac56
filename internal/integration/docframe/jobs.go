package docframe

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are the document framework's job handlers, which the worker
// registers: a DocType's field indexes, built concurrently, and their sweep.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.DocframeIndexes) error {
			return s.BuildIndexes(ctx, p.OrganizationID, p.Doctype, p.Drop)
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.DocframeIndexSweep) error {
			built, dropped, err := s.SweepIndexes(ctx)
			if built+dropped > 0 {
				s.log.Warn("the index sweep made good what lost or failed builds left", "built", built, "dropped", dropped)
			}
			return err
		}),
	}
}

// Schedules are the document framework's periodic jobs, which the
// scheduler fires: field indexes a lost or crashed build left missing,
// invalid or unwanted.
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "docframe index sweep", Spec: "@every 10m", Job: func(t time.Time) jobs.Payload {
			return jobs.DocframeIndexSweep{Tick: t.Truncate(10 * time.Minute)}
		}},
	}
}
