package app_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"wharf/app"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/metrics/metricstest"
	"wharf/internal/testenv"
)

func TestHealthEndpointReflectsTheCheck(t *testing.T) {
	ctx := context.Background()
	var failing atomic.Bool
	addr, stop, err := app.ServeOps("127.0.0.1:0", testenv.Quiet(), func(context.Context) error {
		if failing.Load() {
			return errors.New("redis: down")
		}
		return nil
	}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	url := "http://" + addr + "/healthz"
	deadline := time.Now().Add(30 * time.Second) // that it answers, not how soon: a busy machine is slow
	for app.Probe(ctx, url) != nil {
		if time.Now().After(deadline) {
			t.Fatal("health endpoint never answered 200")
		}
		time.Sleep(20 * time.Millisecond)
	}
	failing.Store(true)
	if err := app.Probe(ctx, url); err == nil {
		t.Fatal("probe passed while the check fails")
	}
}

// The operator listener binds before it returns: a taken address stops
// the start-up with an error instead of a log line later.
func TestOpsListenerFailsOnATakenAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, _, err := app.ServeOps(l.Addr().String(), testenv.Quiet(), nil, metrics.New(), false); err == nil {
		t.Fatal("ServeOps on a taken address succeeded")
	}
	addr, stop, err := app.ServeOps("", testenv.Quiet(), nil, metrics.New(), false)
	if err != nil || addr != "" {
		t.Fatalf("an empty address must serve nothing: %q, %v", addr, err)
	}
	stop()
}

// The api's listener has no check: it serves /metrics, with the Go runtime
// and process collectors, and no /healthz.
func TestOpsListenerServesMetricsWithRuntimeAndProcess(t *testing.T) {
	addr, stop, err := app.ServeOps("127.0.0.1:0", testenv.Quiet(), nil, metrics.New(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	f := metricstest.Scrape(t, "http://"+addr+"/metrics")
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if !f.Has(name) {
			t.Errorf("no %s in:\n%s", name, f.Text)
		}
	}
	res, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("/healthz without a check answered %d, want 404", res.StatusCode)
	}
	if strings.Contains(f.Text, "wharf_scheduler_leader") {
		t.Fatal("a process that is not a scheduler shows the leader gauge")
	}
}

// The profiler is served only when PPROF_ENABLED asks for it, and only on
// the operator listener.
func TestOpsListenerServesProfilerOnlyWhenEnabled(t *testing.T) {
	for _, on := range []bool{false, true} {
		addr, stop, err := app.ServeOps("127.0.0.1:0", testenv.Quiet(), nil, metrics.New(), on)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Get("http://" + addr + "/debug/pprof/")
		stop()
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		want := http.StatusNotFound
		if on {
			want = http.StatusOK
		}
		if res.StatusCode != want {
			t.Errorf("profiler enabled=%v: /debug/pprof/ answered %d, want %d", on, res.StatusCode, want)
		}
	}
}
