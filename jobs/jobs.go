// Package jobs is the contract between the processes that enqueue work (api,
// scheduler) and the worker that does it: task types, typed payloads with
// their default queue, retry and uniqueness options, and the Enqueuer.
//
// Payloads carry IDs, never rows. Every payload that acts for one
// organization has an organization_id field, which the handler passes to
// the domain method (every domain query is scoped by it). This package
// imports no domain code.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Queues, by priority. Interactive work must never wait behind bulk work.
const (
	QueueCritical = "critical" // user-facing, latency-sensitive
	QueueDefault  = "default"
	QueueLow      = "low" // maintenance
)

// QueuePriorities is the weighted priority the worker gives each queue.
var QueuePriorities = map[string]int{QueueCritical: 6, QueueDefault: 3, QueueLow: 1}

// Payload is a typed job argument. TaskType is the asynq task type, which
// is also the name operators see in the asynq UI, so it reads as
// "area:action".
type Payload interface {
	TaskType() string
}

// optioner lets a payload declare its default options (queue, retries,
// timeout, task id).
type optioner interface {
	Options() []asynq.Option
}

// Enqueuer puts typed payloads on the queue.
type Enqueuer struct {
	client    *asynq.Client
	inspector *asynq.Inspector
}

// NewEnqueuer wraps an asynq client; inspector (may be nil) lets callers
// wait for a task's result.
func NewEnqueuer(c *asynq.Client, inspector *asynq.Inspector) *Enqueuer {
	return &Enqueuer{client: c, inspector: inspector}
}

// ErrTaskFailed is returned by EnqueueAndWait when the task ended archived.
var ErrTaskFailed = errors.New("jobs: task failed")

// EnqueueAndWait enqueues p and waits up to wait for it to complete. It
// returns the task's result (written with ResultWriter; the task needs a
// Retention) and done=true when it completed in time, or done=false with the
// task info when it is still queued or running: the caller can answer "in
// progress" instead of blocking. A task that failed for good returns
// ErrTaskFailed with its last error.
func (e *Enqueuer) EnqueueAndWait(ctx context.Context, p Payload, wait time.Duration, extra ...asynq.Option) (info *asynq.TaskInfo, result []byte, done bool, err error) {
	if e.inspector == nil {
		return nil, nil, false, errors.New("jobs: no inspector to wait with")
	}
	info, err = e.Enqueue(ctx, p, extra...)
	if err != nil {
		return nil, nil, false, err
	}
	deadline := time.Now().Add(wait)
	// The first looks come soon and the later ones every 20 ms: a task is
	// seen done at most 20 ms after it ends (with a fixed 50 ms tick, 25 ms
	// on average: 5% of a 10,000-row import), and the waiting costs one
	// read of the task's state in Redis every 20 ms, for the few callers
	// that wait (imports, template syncs).
	for pause := 5 * time.Millisecond; time.Now().Before(deadline); pause = min(2*pause, 20*time.Millisecond) {
		t := time.NewTimer(min(pause, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return info, nil, false, ctx.Err()
		case <-t.C:
		}
		ti, err := e.inspector.GetTaskInfo(info.Queue, info.ID)
		if err != nil {
			continue // not visible yet, or briefly moving between states
		}
		switch ti.State {
		case asynq.TaskStateCompleted:
			return ti, ti.Result, true, nil
		case asynq.TaskStateArchived:
			return ti, nil, true, fmt.Errorf("%w: %s", ErrTaskFailed, ti.LastErr)
		}
		info = ti
	}
	return info, nil, false, nil
}

// ErrDuplicate is returned when a task with the same deterministic id is
// already queued: the work is already scheduled, which callers treat as
// success.
var ErrDuplicate = errors.New("jobs: duplicate task")

// Enqueue serialises p and enqueues it with its default options followed by
// extra (later options win).
func (e *Enqueuer) Enqueue(ctx context.Context, p Payload, extra ...asynq.Option) (*asynq.TaskInfo, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("jobs: encode %s: %w", p.TaskType(), err)
	}
	var opts []asynq.Option
	if o, ok := p.(optioner); ok {
		opts = append(opts, o.Options()...)
	}
	opts = append(opts, extra...)
	info, err := e.client.EnqueueContext(ctx, asynq.NewTask(p.TaskType(), b), opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, asynq.ErrDuplicateTask) {
		return nil, ErrDuplicate
	}
	return info, err
}

// Decode reads a task's payload into T. A payload that does not decode will
// never decode, so the error skips retries.
func Decode[T Payload](t *asynq.Task) (T, error) {
	var p T
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return p, fmt.Errorf("decode %s payload: %v: %w", t.Type(), err, asynq.SkipRetry)
	}
	return p, nil
}

// At returns the asynq option that runs a task no earlier than t. asynq
// keeps scheduled tasks with whole-second scores, so a plain ProcessAt can
// fire up to a second early; rounding up to the next second keeps "after
// t" true.
func At(t time.Time) asynq.Option {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return asynq.ProcessAt(t)
}

// RateLimited is returned by a handler that must wait for a rate limit. The
// worker retries it after RetryAfter without counting a failure, so waiting
// can never exhaust a task's retries.
type RateLimited struct {
	RetryAfter time.Duration
	Reason     string
}

func (e *RateLimited) Error() string {
	return fmt.Sprintf("rate limited (%s), retry in %s", e.Reason, e.RetryAfter)
}

// IsRateLimited reports whether err is (or wraps) a RateLimited.
func IsRateLimited(err error) (*RateLimited, bool) {
	var rl *RateLimited
	ok := errors.As(err, &rl)
	return rl, ok
}

// Latency returns how long the oldest task ready to run in queue has waited
// for a worker slot (0 when none waits). A long-running task that could go
// on (an unpaced campaign lane) checks it to hand its slot over when others
// starve.
func (e *Enqueuer) Latency(queue string) (time.Duration, error) {
	if e.inspector == nil {
		return 0, errors.New("jobs: no inspector")
	}
	info, err := e.inspector.GetQueueInfo(queue)
	if err != nil {
		return 0, err
	}
	return info.Latency, nil
}
