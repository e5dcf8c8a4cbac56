package jobs

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
)

// Handler is one task type's handler, as a domain declares it among its
// module's jobs and the worker registers it.
type Handler struct {
	Type   string
	Handle asynq.HandlerFunc
}

// Handle is the Handler of the payload type P, registered under P's task
// type: it decodes the payload (an undecodable one fails without retries,
// see Decode) and calls fn with it.
func Handle[P Payload](fn func(context.Context, P) error) Handler {
	return HandleTask(func(ctx context.Context, p P, _ *asynq.Task) error { return fn(ctx, p) })
}

// HandleTask is Handle for a handler that also needs the task: it writes
// the task's result (read by whoever waits for it, and the asynq UI).
func HandleTask[P Payload](fn func(context.Context, P, *asynq.Task) error) Handler {
	var zero P
	return Handler{Type: zero.TaskType(), Handle: func(ctx context.Context, t *asynq.Task) error {
		p, err := Decode[P](t)
		if err != nil {
			return err
		}
		return fn(ctx, p, t)
	}}
}

// LastAttempt reports whether this run of the task in ctx is its last try:
// a handler that must record a failure for good does it then.
func LastAttempt(ctx context.Context) bool {
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry
}

// Schedule is one periodic job, as a domain declares it among its module's
// schedules and the scheduler fires it: Spec is a cron spec (robfig/cron
// syntax, including "@every 1h"), Job builds the payload of a tick (its
// task id derived from the tick, so that a tick enqueues once).
type Schedule struct {
	Name string
	Spec string
	Job  func(tick time.Time) Payload
}
