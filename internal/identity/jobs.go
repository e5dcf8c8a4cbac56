package identity

import (
	"context"
	"time"

	"wharf/jobs"
)

// Jobs are identity's job handlers, which the worker registers: an API
// key's last use, and the purge of expired refresh tokens.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.APIKeyTouch) error {
			return s.TouchAPIKey(ctx, p.OrganizationID, p.APIKeyID, p.UsedAt)
		}),
		jobs.Handle(func(ctx context.Context, _ jobs.PurgeRefreshTokens) error {
			n, err := s.PurgeRefreshTokens(ctx)
			if err == nil && n > 0 {
				s.log.Info("purged refresh tokens", "count", n)
			}
			return err
		}),
	}
}

// Schedules are identity's periodic jobs, which the scheduler fires.
func Schedules() []jobs.Schedule {
	return []jobs.Schedule{
		{Name: "purge refresh tokens", Spec: "@every 1h", Job: func(t time.Time) jobs.Payload {
			return jobs.PurgeRefreshTokens{Tick: t.Truncate(time.Hour)}
		}},
	}
}
