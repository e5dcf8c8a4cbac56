package bench_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Profiles. With BENCH_PROFILE=<dir>, the api and worker processes serve
// Go's profiler on an operator listener of their own (PPROF_ENABLED), and
// a benchmark that calls profile takes a CPU profile of each for
// BENCH_PROFILE_SECONDS (default 5) from the moment it starts measuring,
// written as <dir>/<benchmark>-<process>.pprof. Read them with
// `go tool pprof -top bin/api <file>`.

// opsEnv is the environment that makes a process serve the profiler, and
// the address it will serve it on ("" when profiling is off).
func opsEnv(b *testing.B, addrVar string) (map[string]string, string) {
	if os.Getenv("BENCH_PROFILE") == "" {
		return nil, ""
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return map[string]string{addrVar: addr, "PPROF_ENABLED": "true"}, addr
}

// profile starts CPU profiles of the system's processes; the benchmark's
// cleanup waits for them to be written.
func (s *system) profile() {
	dir := os.Getenv("BENCH_PROFILE")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.b.Fatal(err)
	}
	seconds := envInt("BENCH_PROFILE_SECONDS", 5)
	name := strings.NewReplacer("/", "_", "=", "-").Replace(s.b.Name())
	var wg sync.WaitGroup
	for proc, addr := range s.profiled {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Timeout: time.Duration(seconds+30) * time.Second}
			res, err := c.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds))
			if err != nil {
				s.b.Logf("profile of %s: %v", proc, err)
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			file := filepath.Join(dir, name+"-"+proc+".pprof")
			if err := os.WriteFile(file, b, 0o644); err != nil {
				s.b.Logf("profile of %s: %v", proc, err)
				return
			}
			s.b.Logf("profile of %s: %s", proc, file)
		}()
	}
	s.b.Cleanup(wg.Wait)
}
