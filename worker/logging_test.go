package worker_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
	"wharf/internal/testenv"
	"wharf/worker"
)

// Jobs that succeed (the scheduled ones run every second) log at debug only;
// a failed attempt is one warning, from the error handler, not two records.
func TestJobLoggingIsQuiet(t *testing.T) {
	h := newHarness(t)
	log, logs := testenv.CaptureLogs()
	mux := worker.NewMux(log, nil)
	mux.HandleFunc("test:probe", func(context.Context, *asynq.Task) error { return nil })
	mux.HandleFunc("test:fail", func(context.Context, *asynq.Task) error { return errors.New("boom") })
	srv := worker.NewServer(h.rc, worker.Options{Concurrency: 2, ShutdownTimeout: time.Second,
		TaskCheckInterval: 50 * time.Millisecond, DelayedTaskCheckInterval: 100 * time.Millisecond}, log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, srv, mux) }()
	defer func() { cancel(); <-done }()

	for range 5 {
		if _, err := h.enq.Enqueue(context.Background(), probe{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.enq.Enqueue(context.Background(), failing{}, asynq.MaxRetry(0)); err != nil {
		t.Fatal(err)
	}
	count := func(level slog.Level, kind string) (n int) {
		for _, r := range logs.Records(level) {
			if r.Attrs["kind"] == kind {
				n++
			}
		}
		return n
	}
	apptest.Eventually(t, 10*time.Second, "jobs run", func() bool {
		return count(slog.LevelDebug, "test:probe") == 5 && count(slog.LevelWarn, "test:fail") == 1
	})
	if n := count(slog.LevelInfo, "test:probe"); n != 0 {
		t.Errorf("%d records at info or above for jobs that succeeded", n)
	}
	var fail []testenv.Record
	for _, r := range logs.Records(slog.LevelInfo) {
		if r.Attrs["kind"] == "test:fail" {
			fail = append(fail, r)
		}
	}
	if len(fail) != 1 || fail[0].Level != slog.LevelWarn || fail[0].Message != "job failed" {
		t.Errorf("a failed attempt logged %+v, want one warning", fail)
	}
}
