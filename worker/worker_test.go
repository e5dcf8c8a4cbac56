package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/metrics/metricstest"
	"wharf/internal/testenv"
	"wharf/jobs"
	"wharf/worker"
)

type probe struct {
	OrganizationID *uuid.UUID `json:"organization_id,omitempty"`
}

func (probe) TaskType() string { return "test:probe" }

// harness runs a real asynq server with Wharf's middleware and policy.
type harness struct {
	t    *testing.T
	rc   asynq.RedisClientOpt
	enq  *jobs.Enqueuer
	insp *asynq.Inspector
	mux  *asynq.ServeMux
	// metricsURL serves the metrics of mux's job runs.
	metricsURL string
	cancel     context.CancelFunc
	done       chan error
}

func newHarness(t *testing.T) *harness {
	url := testenv.RedisURL(t)
	rdb := testenv.Redis(t, url)
	rc := asynq.RedisClientOpt{Addr: rdb.Options().Addr, DB: rdb.Options().DB}
	client := asynq.NewClient(rc)
	t.Cleanup(func() { client.Close() })
	insp := asynq.NewInspector(rc)
	t.Cleanup(func() { insp.Close() })
	m := metrics.New()
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return &harness{t: t, rc: rc, enq: jobs.NewEnqueuer(client, nil), insp: insp, mux: worker.NewMux(testenv.Quiet(), m), metricsURL: srv.URL}
}

// runs returns how many runs of the task type ended with each outcome.
func (h *harness) runs(taskType string) map[metrics.JobOutcome]float64 {
	f := metricstest.Scrape(h.t, h.metricsURL)
	out := map[metrics.JobOutcome]float64{}
	for _, o := range []metrics.JobOutcome{metrics.JobSuccess, metrics.JobRetry, metrics.JobFailure, metrics.JobWait} {
		labels := map[string]string{"task_type": taskType, "outcome": string(o)}
		if n := f.Value("wharf_jobs_processed_total", labels); n > 0 {
			out[o] = n
			if d := f.Value("wharf_job_duration_seconds", labels); d != n {
				h.t.Errorf("%s %s: %v runs but %v durations", taskType, o, n, d)
			}
		}
	}
	return out
}

func (h *harness) expectRuns(taskType string, want map[metrics.JobOutcome]float64) {
	h.t.Helper()
	if got := h.runs(taskType); !maps.Equal(got, want) {
		h.t.Fatalf("%s runs by outcome %v, want %v", taskType, got, want)
	}
}

func (h *harness) start(shutdown time.Duration) {
	srv := worker.NewServer(h.rc, worker.Options{Concurrency: 2, ShutdownTimeout: shutdown,
		TaskCheckInterval: 50 * time.Millisecond, DelayedTaskCheckInterval: 100 * time.Millisecond}, testenv.Quiet())
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- worker.Run(ctx, srv, h.mux) }()
	h.t.Cleanup(h.stop)
}

func (h *harness) stop() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
		h.cancel = nil
	}
}

// A handler that keeps waiting for a rate limit is retried many more times
// than its retry budget without being archived, and its retry count stays 0.
func TestRateLimitWaitIsNeverAFailure(t *testing.T) {
	h := newHarness(t)
	var calls, retriedSeen atomic.Int64
	h.mux.HandleFunc("test:probe", func(ctx context.Context, _ *asynq.Task) error {
		n := calls.Add(1)
		r, _ := asynq.GetRetryCount(ctx)
		retriedSeen.Store(int64(r))
		if n <= 6 {
			return &jobs.RateLimited{RetryAfter: 10 * time.Millisecond, Reason: "test"}
		}
		return nil
	})
	h.start(time.Second)
	info, err := h.enq.Enqueue(context.Background(), probe{}, asynq.MaxRetry(1), asynq.Retention(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, 15*time.Second, "task completion", func() bool { return calls.Load() >= 7 })
	apptest.Eventually(t, 5*time.Second, "completed state", func() bool {
		ti, err := h.insp.GetTaskInfo(info.Queue, info.ID)
		return err == nil && ti.State == asynq.TaskStateCompleted
	})
	if retriedSeen.Load() != 0 {
		t.Fatalf("retry count %d after rate-limit waits, want 0", retriedSeen.Load())
	}
	// The metrics count the waits apart: neither failures nor retries.
	h.expectRuns("test:probe", map[metrics.JobOutcome]float64{metrics.JobWait: 6, metrics.JobSuccess: 1})
}

type failing struct{}

func (failing) TaskType() string { return "test:fail" }

func TestRealFailuresExhaustRetries(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int64
	h.mux.HandleFunc("test:fail", func(context.Context, *asynq.Task) error { calls.Add(1); return errors.New("boom") })
	h.start(time.Second)
	// RetryDelay backs off from 2 s: one retry takes about 2 s.
	info, err := h.enq.Enqueue(context.Background(), failing{}, asynq.MaxRetry(1))
	if err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, 15*time.Second, "archived", func() bool {
		ti, err := h.insp.GetTaskInfo(info.Queue, info.ID)
		return err == nil && ti.State == asynq.TaskStateArchived
	})
	if calls.Load() != 2 {
		t.Fatalf("%d attempts, want 2 (1 + 1 retry)", calls.Load())
	}
	h.expectRuns("test:fail", map[metrics.JobOutcome]float64{metrics.JobRetry: 1, metrics.JobFailure: 1})
}

func TestRetryDelay(t *testing.T) {
	if d := worker.RetryDelay(0, errors.New("x"), nil); d != 2*time.Second {
		t.Fatalf("first retry after %s, want 2s", d)
	}
	if d := worker.RetryDelay(1, errors.New("x"), nil); d != 4*time.Second {
		t.Fatalf("second retry after %s, want 4s", d)
	}
	if d := worker.RetryDelay(30, errors.New("x"), nil); d != 10*time.Minute {
		t.Fatalf("cap %s", d)
	}
	if d := worker.RetryDelay(5, &jobs.RateLimited{RetryAfter: 1500 * time.Millisecond}, nil); d != 1500*time.Millisecond {
		t.Fatalf("rate-limit delay %s", d)
	}
}

func TestPanicsAreRecoveredAndRetried(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int64
	h.mux.HandleFunc("test:probe", func(context.Context, *asynq.Task) error {
		if calls.Add(1) == 1 {
			panic("handler bug")
		}
		return nil
	})
	h.start(time.Second)
	info, _ := h.enq.Enqueue(context.Background(), probe{}, asynq.MaxRetry(2), asynq.Retention(time.Hour))
	apptest.Eventually(t, 15*time.Second, "completion after panic", func() bool {
		ti, err := h.insp.GetTaskInfo(info.Queue, info.ID)
		return err == nil && ti.State == asynq.TaskStateCompleted
	})
	if calls.Load() != 2 {
		t.Fatalf("%d calls", calls.Load())
	}
	h.expectRuns("test:probe", map[metrics.JobOutcome]float64{metrics.JobRetry: 1, metrics.JobSuccess: 1})
}

func TestBadPayloadSkipsRetries(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int64
	h.mux.HandleFunc(jobs.TypeAPIKeyTouch, func(ctx context.Context, t *asynq.Task) error {
		calls.Add(1)
		_, err := jobs.Decode[jobs.APIKeyTouch](t)
		return err
	})
	h.start(time.Second)
	client := asynq.NewClient(h.rc)
	defer client.Close()
	info, err := client.Enqueue(asynq.NewTask(jobs.TypeAPIKeyTouch, []byte("{not json")), asynq.MaxRetry(5))
	if err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, 10*time.Second, "archived", func() bool {
		ti, err := h.insp.GetTaskInfo(info.Queue, info.ID)
		return err == nil && ti.State == asynq.TaskStateArchived
	})
	if calls.Load() != 1 {
		t.Fatalf("%d attempts for an undecodable payload, want 1", calls.Load())
	}
	h.expectRuns(jobs.TypeAPIKeyTouch, map[metrics.JobOutcome]float64{metrics.JobFailure: 1})
}

// On shutdown an in-flight job finishes within the shutdown timeout; a job
// that cannot finish in time goes back to its queue instead of being lost.
func TestGracefulShutdown(t *testing.T) {
	h := newHarness(t)
	started := make(chan struct{}, 1)
	var finished atomic.Bool
	h.mux.HandleFunc("test:probe", func(ctx context.Context, _ *asynq.Task) error {
		started <- struct{}{}
		time.Sleep(700 * time.Millisecond)
		finished.Store(true)
		return nil
	})
	h.start(3 * time.Second)
	info, _ := h.enq.Enqueue(context.Background(), probe{}, asynq.Retention(time.Hour))
	<-started
	h.stop()
	if !finished.Load() {
		t.Fatal("shutdown did not wait for the in-flight job")
	}
	ti, err := h.insp.GetTaskInfo(info.Queue, info.ID)
	if err != nil || ti.State != asynq.TaskStateCompleted {
		t.Fatalf("task state %v %v", ti, err)
	}

	// Now a job longer than the shutdown timeout.
	h2 := newHarnessSameRedis(t, h)
	started2 := make(chan struct{}, 1)
	h2.mux.HandleFunc("test:probe", func(ctx context.Context, _ *asynq.Task) error {
		started2 <- struct{}{}
		select {
		case <-time.After(time.Minute):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	h2.start(300 * time.Millisecond)
	info2, _ := h2.enq.Enqueue(context.Background(), probe{})
	<-started2
	h2.stop()
	ti, err = h2.insp.GetTaskInfo(info2.Queue, info2.ID)
	if err != nil || (ti.State != asynq.TaskStatePending && ti.State != asynq.TaskStateRetry) {
		t.Fatalf("interrupted task state %v %v, want back in the queue", ti, err)
	}
	b, _ := json.Marshal(ti.State.String())
	t.Logf("interrupted task is %s", b)
}

func newHarnessSameRedis(t *testing.T, h *harness) *harness {
	return &harness{t: t, rc: h.rc, enq: h.enq, insp: h.insp, mux: worker.NewMux(testenv.Quiet(), nil)}
}
