// Package worker wires the asynq server that runs every background job: one
// ServeMux with metrics, logging and panic recovery middleware, queue priorities, and
// the retry policy under which waiting for a rate limit is never a failure.
// Handlers pass the payload's organization_id to the domain methods as an
// argument; nothing travels in the context.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/infra/metrics"
	"wharf/jobs"
)

// Options configure the asynq server.
type Options struct {
	Concurrency     int
	ShutdownTimeout time.Duration
	Queues          map[string]int // nil means jobs.QueuePriorities
	// TaskCheckInterval is how often an idle worker polls its queues
	// (default 20 ms, WORKER_TASK_CHECK_INTERVAL: asynq's processor sleeps
	// 0.5 to 1.5 times it whenever it finds no task and dequeues nothing
	// meanwhile, so at 1 s (asynq's default) or 200 ms every step of a reply
	// (inbound processing, the chatbot) waited that long behind a moment of
	// empty queue).
	TaskCheckInterval time.Duration
	// DelayedTaskCheckInterval is how often retries and scheduled tasks due
	// are moved to their queue (default 250 ms, so that the 2 s and 4 s
	// webhook retries and short rate-limit waits are kept; asynq's default
	// is 5 s).
	DelayedTaskCheckInterval time.Duration
}

// NewServer builds the asynq server with Wharf's retry policy.
func NewServer(redis asynq.RedisConnOpt, o Options, log *slog.Logger) *asynq.Server {
	queues := o.Queues
	if queues == nil {
		queues = jobs.QueuePriorities
	}
	if o.TaskCheckInterval == 0 {
		o.TaskCheckInterval = 20 * time.Millisecond
	}
	if o.DelayedTaskCheckInterval == 0 {
		o.DelayedTaskCheckInterval = 250 * time.Millisecond
	}
	return asynq.NewServer(redis, asynq.Config{
		Concurrency:              o.Concurrency,
		Queues:                   queues,
		ShutdownTimeout:          o.ShutdownTimeout,
		TaskCheckInterval:        o.TaskCheckInterval,
		DelayedTaskCheckInterval: o.DelayedTaskCheckInterval,
		Logger:                   asynqLogger{log.With("component", "asynq")},
		// A handler waiting for a rate limit is not failing: it is retried
		// without using up a retry.
		IsFailure: func(err error) bool {
			_, limited := jobs.IsRateLimited(err)
			return !limited
		},
		RetryDelayFunc: RetryDelay,
		ErrorHandler: asynq.ErrorHandlerFunc(func(ctx context.Context, t *asynq.Task, err error) {
			if _, limited := jobs.IsRateLimited(err); limited {
				return
			}
			retried, _ := asynq.GetRetryCount(ctx)
			maxRetry, _ := asynq.GetMaxRetry(ctx)
			log.Warn("job failed", "kind", t.Type(), "retried", retried, "max_retry", maxRetry, "error", err)
		}),
	})
}

// RetryDelay waits as long as a rate limit asks, and otherwise backs off
// exponentially from 2 s (2, 4, 8 ... capped at 10 minutes).
func RetryDelay(n int, err error, t *asynq.Task) time.Duration {
	if rl, ok := jobs.IsRateLimited(err); ok && rl.RetryAfter > 0 {
		return rl.RetryAfter
	}
	d := 2 * time.Second << min(n, 10)
	return min(d, 10*time.Minute)
}

// NewMux returns a ServeMux with Wharf's middleware installed; callers
// register handlers on it. m records every job run (nil: none).
func NewMux(log *slog.Logger, m *metrics.Set) *asynq.ServeMux {
	mux := asynq.NewServeMux()
	// measure is outermost, so that it sees a panic as the failed run
	// recoverPanic turned it into.
	mux.Use(measure(m), logging(log), recoverPanic(log))
	return mux
}

// Run processes tasks until ctx is cancelled, then shuts down: in-flight
// tasks get ShutdownTimeout to finish, and the rest go back to their queue.
func Run(ctx context.Context, srv *asynq.Server, h asynq.Handler) error {
	if err := srv.Start(h); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	<-ctx.Done()
	srv.Shutdown()
	return nil
}

// measure records each run of a job by task type, outcome and duration.
func measure(m *metrics.Set) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			start := time.Now()
			err := next.ProcessTask(ctx, t)
			m.Job(t.Type(), outcome(ctx, err), time.Since(start))
			return err
		})
	}
}

// outcome classifies a run the way the server's retry policy treats it: a
// rate-limit wait is not a failure (IsFailure) and uses no retry; a
// failure is final when the task is not retryable or used its last retry.
func outcome(ctx context.Context, err error) metrics.JobOutcome {
	if err == nil {
		return metrics.JobSuccess
	}
	if _, limited := jobs.IsRateLimited(err); limited {
		return metrics.JobWait
	}
	if errors.Is(err, asynq.SkipRetry) || jobs.LastAttempt(ctx) {
		return metrics.JobFailure
	}
	return metrics.JobRetry
}

func logging(log *slog.Logger) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
			id, _ := asynq.GetTaskID(ctx)
			start := time.Now()
			err := next.ProcessTask(ctx, t)
			attrs := []any{"kind", t.Type(), "task_id", id, "duration", time.Since(start)}
			// Debug only: the server's ErrorHandler warns of failures once,
			// with the retry count, and the scheduled jobs (some every
			// second) would otherwise flood the log.
			if rl, limited := jobs.IsRateLimited(err); limited {
				log.Debug("job waiting for rate limit", append(attrs, "retry_after", rl.RetryAfter)...)
			} else if err != nil {
				log.Debug("job error", append(attrs, "error", err)...)
			} else {
				log.Debug("job done", attrs...)
			}
			return err
		})
	}
}

// recoverPanic turns a panicking handler into a failed attempt with the stack
// in the log, instead of a crashed worker.
func recoverPanic(log *slog.Logger) asynq.MiddlewareFunc {
	return func(next asynq.Handler) asynq.Handler {
		return asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) (err error) {
			defer func() {
				if r := recover(); r != nil {
					log.Error("job panicked", "kind", t.Type(), "panic", r, "stack", string(debug.Stack()))
					err = fmt.Errorf("panic in %s: %v", t.Type(), r)
				}
			}()
			return next.ProcessTask(ctx, t)
		})
	}
}

// asynqLogger adapts slog to asynq's logger interface.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) {
	a.l.Error(fmt.Sprint(args...))
	panic(errors.New(fmt.Sprint(args...)))
}
