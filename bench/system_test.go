package bench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// system is Wharf as a client meets it: the api and the worker as processes
// of their own (built from cmd/), PostgreSQL, Redis and the provider
// simulator (in this process, answering at once), all on this machine's
// cores. Load goes to the api process over keep-alive connections; CPU time
// is read per process from /proc.
type system struct {
	*apptest.Fixture
	b       *testing.B
	api     *apptest.Process
	base    string
	workers []*apptest.Process
	// profiled names each process's profiler address (BENCH_PROFILE).
	profiled map[string]string
}

// benchEnv is the configuration every benchmark shares: logs quiet, and the
// request rate limits high enough for the load (they still run: each
// request pays for its Redis check).
var benchEnv = map[string]string{"LOG_LEVEL": "error", "RATE_LIMIT_PER_MINUTE": "100000000", "RATE_LIMIT_BULK_PER_MINUTE": "1000000"}

// newSystem starts a system with a connected account; workers worker
// processes run beside the api process (0: none yet).
func newSystem(b *testing.B, env map[string]string, sim func(*platformsim.Config), workers int) *system {
	b.Helper()
	all := map[string]string{}
	for k, v := range benchEnv {
		all[k] = v
	}
	for k, v := range env {
		all[k] = v
	}
	f := apptest.NewFixture(b, all, func(c *platformsim.Config) {
		c.ThroughputPerSecond = -1
		c.SentAfter, c.DeliveredAfter, c.ReadAfter = -1, -1, -1 // statuses are the benchmarks' own business
		if sim != nil {
			sim(c)
		}
	})
	s := &system{Fixture: f, b: b, profiled: map[string]string{}}
	// Every send is paced by its account's messaging tier (internal/outbound),
	// and the simulator reports TIER_1K (10 msg/s of ours): the benchmarks
	// measure what a path costs, not the tier's pace, so the account is
	// TIER_UNLIMITED unless a benchmark sets a tier of its own.
	s.Do("PUT", "/api/accounts/"+s.AccountID, map[string]any{"messaging_tier": "TIER_UNLIMITED"}, s.Admin.Auth()).Expect(b, 200)
	env, addr := opsEnv(b, "METRICS_ADDR")
	s.api, s.base = f.StartAPIProcess(env)
	if addr != "" {
		s.profiled["api"] = addr
	}
	for i := 0; i < workers; i++ {
		env, addr := opsEnv(b, "HEALTH_ADDR")
		s.workers = append(s.workers, f.StartWorkerProcess(env))
		if addr != "" {
			s.profiled[fmt.Sprintf("worker%d", i+1)] = addr
		}
	}
	return s
}

// cpu is the CPU time of the api process, the worker processes, and every
// PostgreSQL and Redis server process on the machine.
// client is this process: the load generator and the provider simulator.
type cpu struct{ api, worker, postgres, redis, client time.Duration }

func (s *system) cpu() cpu {
	var c cpu
	c.api = procCPU(s.api.Cmd.Process.Pid)
	for _, w := range s.workers {
		c.worker += procCPU(w.Cmd.Process.Pid)
	}
	c.postgres = namedCPU("postgres")
	c.redis = namedCPU("redis-server")
	c.client = procCPU(os.Getpid())
	return c
}

func (c cpu) sub(o cpu) cpu {
	return cpu{c.api - o.api, c.worker - o.worker, c.postgres - o.postgres, c.redis - o.redis, c.client - o.client}
}

// report adds the CPU spent per unit of work, in milliseconds.
func (c cpu) report(b *testing.B, n int, unit string) {
	if n == 0 {
		return
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(per(c.api), "api-cpu-ms/"+unit)
	b.ReportMetric(per(c.worker), "worker-cpu-ms/"+unit)
	b.ReportMetric(per(c.postgres), "pg-cpu-ms/"+unit)
	b.ReportMetric(per(c.redis), "redis-cpu-ms/"+unit)
	b.ReportMetric(per(c.client), "client-cpu-ms/"+unit)
}

// procCPU reads a process's user+system CPU time.
func procCPU(pid int) time.Duration {
	cpu, _ := procStats(pid)
	return cpu
}

// namedCPU sums the CPU time of every process with this name, with the time
// of their children that have exited (PostgreSQL runs one process per
// connection; the postmaster collects the time of those that ended).
func namedCPU(name string) time.Duration {
	out, err := exec.Command("pgrep", "-x", name).Output()
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			total += procCPU(pid) + childrenCPU(pid)
		}
	}
	return total
}

// childrenCPU reads the CPU time of a process's children that have exited.
func childrenCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	cutime, _ := strconv.ParseInt(fields[13], 10, 64)
	cstime, _ := strconv.ParseInt(fields[14], 10, 64)
	return time.Duration(cutime+cstime) * time.Second / 100
}

// procStats reads a process's CPU seconds and peak resident memory.
func procStats(pid int) (cpu time.Duration, peakRSS int64) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		cpu = time.Duration(utime+stime) * time.Second / 100 // clock ticks (USER_HZ = 100)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				peakRSS = kb << 10
			}
		}
	}
	return cpu, peakRSS
}

// client keeps enough idle connections for the parallel load: every
// benchmark client reuses its connection.
var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}, Timeout: 60 * time.Second}

// call sends one request and returns its status and answer.
func call(method, url string, headers map[string]string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// latencies collects request durations from parallel goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// report adds p50/p99 (ms) and the rate (per second over elapsed) to b.
func (l *latencies) report(b *testing.B, elapsed time.Duration, unit string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	pct := func(p float64) float64 {
		return float64(l.d[min(len(l.d)-1, int(float64(len(l.d))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(l.d))/elapsed.Seconds(), unit+"/s")
}

// load runs fn from clients goroutines until stop says so (for request i,
// from the first request, elapsed so far) and returns how long it ran.
// Errors fail the benchmark; latencies are recorded.
func load(b *testing.B, clients int, lat *latencies, stop func(i int64, elapsed time.Duration) bool, fn func(i int64) error) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < clients; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if stop(i, time.Since(start)) {
					return
				}
				t0 := time.Now()
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
				lat.add(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// expect turns an unexpected answer into an error.
func expect(status int, body []byte, err error, want int) error {
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("status %d, want %d: %s", status, want, body)
	}
	return nil
}

// data decodes the data of a success envelope.
func data(body []byte, v any) error {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return err
	}
	return json.Unmarshal(env.Data, v)
}

// waitFor polls cond every 20 ms until it holds (or fails the benchmark
// after timeout) and returns when it first held.
func waitFor(b *testing.B, timeout time.Duration, what string, cond func() bool) time.Time {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("timed out after %s waiting for %s", timeout, what)
	return time.Time{}
}
