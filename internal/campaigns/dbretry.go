package campaigns

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/jobs"
)

// Retrying statements while the database is away.
const (
	dbRetryFor      = time.Minute            // then the lane gives up and its job is retried
	dbRetryFirst    = 100 * time.Millisecond // first backoff
	dbRetryMaxDelay = time.Second            // so a lane carries on within a second of the database's return
)

// retryDB runs fn until it succeeds, fails for a reason that is not the
// database being away, ctx ends, or dbRetryFor passes. A lane's statements
// are idempotent (compare-and-set updates, claims found again by their
// claim id), so running one again is safe.
func (s *Service) retryDB(ctx context.Context, what string, fn func(context.Context) error) error {
	deadline := time.Now().Add(dbRetryFor)
	delay := dbRetryFirst
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil || !dbUnavailable(err) || time.Now().After(deadline) {
			if err == nil && attempt > 1 {
				s.log.Info("database back; campaign lane carries on", "operation", what, "attempts", attempt)
			}
			return err
		}
		if attempt == 1 {
			s.log.Warn("database unavailable; campaign lane retrying", "operation", what, "error", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, dbRetryMaxDelay)
	}
}

// dbUnavailable tells a database that is away or restarting (connection
// failures, shutdown, "starting up", a broken connection) from an error in
// the statement, which would fail again.
func dbUnavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, gorm.ErrRecordNotFound) || apperr.KindOf(err) != apperr.Internal {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || // connection exception
			strings.HasPrefix(pe.Code, "57P") || // admin shutdown, crash shutdown, cannot connect now
			pe.Code == "53300" || // too many connections
			pe.Code == "40001" || pe.Code == "40P01" // serialization failure, deadlock
	}
	// Not a server answer: the connection itself failed (refused, reset,
	// closed while in use).
	return true
}

// dbWait turns a failure to load a run into a wait that uses no retry: the
// lane comes back in a few seconds and loads it again.
func dbWait(err error) error {
	if dbUnavailable(err) {
		return &jobs.RateLimited{RetryAfter: 2 * time.Second, Reason: "database unavailable"}
	}
	return err
}
