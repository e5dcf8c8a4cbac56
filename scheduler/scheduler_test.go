package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/metrics/metricstest"
	"wharf/internal/testenv"
	"wharf/jobs"
	"wharf/scheduler"
)

type tick struct {
	At time.Time `json:"at"`
}

func (tick) TaskType() string { return "test:tick" }

func (p tick) Options() []asynq.Option {
	return []asynq.Option{asynq.TaskID(fmt.Sprintf("tick:%d", p.At.Unix())), asynq.Retention(time.Hour)}
}

func entries() []scheduler.Entry {
	return []scheduler.Entry{{Name: "tick", Spec: "@every 1s", Job: func(t time.Time) jobs.Payload {
		return tick{At: t.Truncate(time.Second)}
	}}}
}

// Two replicas: one leads and fires each tick once; when it stops, the other
// takes over.
func TestOneLeaderFiresAndStandbyTakesOver(t *testing.T) {
	url := testenv.RedisURL(t)
	rdb := testenv.Redis(t, url)
	rc := asynq.RedisClientOpt{Addr: rdb.Options().Addr, DB: rdb.Options().DB}
	client := asynq.NewClient(rc)
	defer client.Close()
	enq := jobs.NewEnqueuer(client, nil)

	ma, mb := serve(t, metrics.New()), serve(t, metrics.New())
	a := scheduler.New(rdb, enq, testenv.Quiet(), 900*time.Millisecond, entries(), ma.set)
	b := scheduler.New(rdb, enq, testenv.Quiet(), 900*time.Millisecond, entries(), mb.set)
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go func() { doneA <- a.Run(ctxA) }()
	time.Sleep(100 * time.Millisecond) // a campaigns first
	go func() { doneB <- b.Run(ctxB) }()
	defer func() { stopB(); <-doneB }()

	time.Sleep(3500 * time.Millisecond)
	if !a.IsLeader() || b.IsLeader() {
		t.Fatalf("leaders: a=%v b=%v", a.IsLeader(), b.IsLeader())
	}
	if a.Fired.Load() < 2 || b.Fired.Load() != 0 {
		t.Fatalf("fired: a=%d b=%d", a.Fired.Load(), b.Fired.Load())
	}
	// The metrics say the same: a leads and fired, b stands by. a goes on
	// firing while it is scraped: its count is read on both sides.
	firedBefore := a.Fired.Load()
	fa, fb := ma.scrape(t), mb.scrape(t)
	firedAfter := a.Fired.Load()
	if fa.Value("wharf_scheduler_leader", nil) != 1 || fb.Value("wharf_scheduler_leader", nil) != 0 {
		t.Fatalf("leader gauges: a=%v b=%v", fa.Value("wharf_scheduler_leader", nil), fb.Value("wharf_scheduler_leader", nil))
	}
	enqueued := map[string]string{"entry": "tick", "outcome": "enqueued"}
	if got := fa.Value("wharf_scheduler_ticks_total", enqueued); got < float64(firedBefore-1) || got > float64(firedAfter+1) {
		t.Fatalf("a's ticks counted %v, fired %d to %d while scraped", got, firedBefore, firedAfter)
	}
	if fb.Has("wharf_scheduler_ticks_total") {
		t.Fatalf("the standby counted ticks:\n%s", fb.Text)
	}
	insp := asynq.NewInspector(rc)
	defer insp.Close()
	firedBefore = a.Fired.Load()
	pending, _ := insp.ListPendingTasks("default")
	firedAfter = a.Fired.Load()
	if n := int64(len(pending)); n < firedBefore || n > firedAfter+1 {
		t.Fatalf("%d tasks queued for %d to %d fires", n, firedBefore, firedAfter)
	}

	stopA()
	<-doneA
	apptest.Eventually(t, 3*time.Second, "standby takes over", b.IsLeader)
	before := b.Fired.Load()
	apptest.Eventually(t, 3*time.Second, "standby fires", func() bool { return b.Fired.Load() > before })
	if fa, fb := ma.scrape(t), mb.scrape(t); fa.Value("wharf_scheduler_leader", nil) != 0 || fb.Value("wharf_scheduler_leader", nil) != 1 {
		t.Fatalf("leader gauges after the hand-over: a=%v b=%v", fa.Value("wharf_scheduler_leader", nil), fb.Value("wharf_scheduler_leader", nil))
	}
}

// A tick whose job exists already (the previous leader fired it) counts as
// a duplicate, not as fired.
func TestDuplicateTicksAreCountedApart(t *testing.T) {
	url := testenv.RedisURL(t)
	rdb := testenv.Redis(t, url)
	rc := asynq.RedisClientOpt{Addr: rdb.Options().Addr, DB: rdb.Options().DB}
	client := asynq.NewClient(rc)
	defer client.Close()
	enq := jobs.NewEnqueuer(client, nil)
	now := time.Now().UTC().Truncate(time.Second)
	for i := range 10 {
		if _, err := enq.Enqueue(context.Background(), tick{At: now.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	m := serve(t, metrics.New())
	s := scheduler.New(rdb, enq, testenv.Quiet(), 900*time.Millisecond, entries(), m.set)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { stop(); <-done }()
	apptest.Eventually(t, 5*time.Second, "two duplicate ticks", func() bool {
		return m.scrape(t).Value("wharf_scheduler_ticks_total", map[string]string{"entry": "tick", "outcome": "duplicate"}) >= 2
	})
	if got := m.scrape(t).Value("wharf_scheduler_ticks_total", map[string]string{"outcome": "enqueued"}); got != 0 || s.Fired.Load() != 0 {
		t.Fatalf("duplicates counted as fired: %v, %d", got, s.Fired.Load())
	}
}

// served is a metrics Set behind a test /metrics endpoint.
type served struct {
	set *metrics.Set
	url string
}

func serve(t *testing.T, m *metrics.Set) served {
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return served{set: m, url: srv.URL}
}

func (s served) scrape(t *testing.T) metricstest.Families { return metricstest.Scrape(t, s.url) }

// Ticks are logged at debug: a leader firing every second logs nothing at
// info or above but its leadership, while a failing enqueue is an error.
func TestTicksAreDebugAndFailuresAreErrors(t *testing.T) {
	url := testenv.RedisURL(t)
	rdb := testenv.Redis(t, url)
	rc := asynq.RedisClientOpt{Addr: rdb.Options().Addr, DB: rdb.Options().DB}
	client := asynq.NewClient(rc)
	defer client.Close()

	log, logs := testenv.CaptureLogs()
	s := scheduler.New(rdb, jobs.NewEnqueuer(client, nil), log, 900*time.Millisecond, entries(), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	apptest.Eventually(t, 5*time.Second, "three fires", func() bool { return s.Fired.Load() >= 3 })
	stop()
	<-done

	var ticks int
	for _, r := range logs.Records(slog.LevelDebug) {
		if r.Attrs["entry"] == "tick" {
			ticks++
		}
	}
	if ticks < 3 {
		t.Fatalf("%d ticks logged at debug, want one per fire", ticks)
	}
	for _, r := range logs.Records(slog.LevelInfo) {
		if r.Message != "scheduler is leader" {
			t.Errorf("logged at %s: %q %v", r.Level, r.Message, r.Attrs)
		}
	}

	// A tick that cannot be enqueued (Redis gone) is an error.
	log, logs = testenv.CaptureLogs()
	closed := asynq.NewClient(rc)
	_ = closed.Close()
	m := serve(t, metrics.New())
	s = scheduler.New(rdb, jobs.NewEnqueuer(closed, nil), log, 900*time.Millisecond, entries(), m.set)
	ctx, stop = context.WithCancel(context.Background())
	go func() { done <- s.Run(ctx) }()
	apptest.Eventually(t, 5*time.Second, "an enqueue error logged", func() bool {
		for _, r := range logs.Records(slog.LevelError) {
			if r.Message == "scheduler cannot enqueue" && r.Attrs["entry"] == "tick" {
				return true
			}
		}
		return false
	})
	stop()
	<-done
	if got := m.scrape(t).Value("wharf_scheduler_ticks_total", map[string]string{"entry": "tick", "outcome": "error"}); got < 1 {
		t.Fatalf("failed enqueues counted %v, want at least 1", got)
	}
}
