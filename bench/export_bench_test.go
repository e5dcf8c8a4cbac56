package bench_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"
)

// BenchmarkExportContacts: one POST /api/export of BENCH_EXPORT_CONTACTS
// contacts (default 100,000; 1,000,000 for the figure in
// docs/BENCHMARKS.md) with the default columns, read to the end by the
// client. It reports rows a second, the time to the first byte, and the
// api process's peak resident memory before and after: a streamed export
// must not grow it with the number of rows.
func BenchmarkExportContacts(b *testing.B) {
	n := envInt("BENCH_EXPORT_CONTACTS", 100000)
	s := newSystem(b, nil, nil, 0)
	s.seedContacts(n)
	_, rss0 := procStats(s.api.Cmd.Process.Pid)
	cpu0 := s.cpu()
	b.ResetTimer()
	start := time.Now()
	req, _ := http.NewRequest("POST", s.base+"/api/export", bytes.NewReader([]byte(`{"table": "contacts"}`)))
	req.Header.Set("Authorization", "Bearer "+s.Admin.AccessToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 30 * time.Minute}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		body, _ := io.ReadAll(res.Body)
		b.Fatalf("export: %d %s", res.StatusCode, body)
	}
	first := time.Since(start)
	lines := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := res.Body.Read(buf)
		lines += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if lines != n+1 {
		b.Fatalf("%d lines for %d contacts and the header", lines, n)
	}
	_, rss1 := procStats(s.api.Cmd.Process.Pid)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(first.Microseconds())/1000, "first-byte-ms")
	b.ReportMetric(float64(rss0)/(1<<20), "api-peak-MiB-before")
	b.ReportMetric(float64(rss1)/(1<<20), "api-peak-MiB-after")
	s.cpu().sub(cpu0).report(b, n, "row")
}
