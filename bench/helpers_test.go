package bench_test

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

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

// client keeps enough idle connections for the parallel load.
var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}

func post(b *testing.B, url string, headers map[string]string, body []byte) int {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// concurrencyLevels are the client counts the latency benchmarks run at:
// each level is parallelism x GOMAXPROCS goroutines.
var concurrencyLevels = []int{1, 8, 32}

// parallel runs fn from parallelism x GOMAXPROCS goroutines as a
// sub-benchmark named after the number of clients, and reports latency
// percentiles and the rate.
func parallel(b *testing.B, parallelism int, unit string, fn func(i int64) time.Duration) {
	clients := parallelism * runtime.GOMAXPROCS(0)
	b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
		var lat latencies
		var next atomic.Int64
		b.SetParallelism(parallelism)
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				lat.add(fn(next.Add(1)))
			}
		})
		lat.report(b, time.Since(start), unit)
	})
}
