package bench_test

import (
	"bytes"
	"net/http"
	"slices"
	"sync"
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
