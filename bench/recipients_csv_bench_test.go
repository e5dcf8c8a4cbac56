package bench_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"
)

// BenchmarkRecipientsCSV100k: one multipart POST
// /api/campaigns/{id}/recipients/import of a 100,000-row CSV file (number,
// name, order, and a column no mapping uses), one placeholder from a
// column and one a fixed value, over HTTP to the api process, from the
// request until the answer (every recipient stored). Each iteration
// imports into a new draft campaign.
func BenchmarkRecipientsCSV100k(b *testing.B) {
	s := newSystem(b, nil, nil, 1)
	tmpl := s.SeedTemplate(s.OrgID, s.AccountID, "order_csv", "Hi, your order {{1}} ships with code {{2}}", false)
	const n = 100_000
	var file bytes.Buffer
	file.WriteString("Mobile,Customer,Order,Note\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&file, "+1556%07d,Customer %d,A-%06d,imported from the shop\n", i, i, i)
	}
	const mapping = `{"phone_number": "Mobile", "name": "Customer", "placeholders": {"1": {"column": "Order"}, "2": {"value": "SPRING24"}}}`
	campaign := func() string {
		var c struct{ ID string }
		s.Do("POST", "/api/campaigns", map[string]any{"name": "Bench CSV", "account_id": s.AccountID, "template_id": tmpl.ID.String()},
			s.Admin.Auth()).Expect(b, 201).Into(b, &c)
		return c.ID
	}
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = campaign()
	}
	cpu0 := s.cpu()
	var total time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		start := time.Now()
		imported := s.uploadRecipients(b, ids[it], file.Bytes(), mapping)
		total += time.Since(start)
		if imported != n {
			b.Fatalf("imported %d of %d", imported, n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/upload")
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "rows/s")
	b.ReportMetric(float64(file.Len())/(1<<20), "file-MiB")
	s.cpu().sub(cpu0).report(b, n*b.N, "row")
}

func (s *system) uploadRecipients(b *testing.B, id string, data []byte, mapping string) int {
	b.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("mapping", mapping)
	fw, _ := mw.CreateFormFile("file", "recipients.csv")
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", s.base+"/api/campaigns/"+id+"/recipients/import", &body)
	req.Header.Set("Authorization", "Bearer "+s.Admin.AccessToken)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Body.Close()
	raw, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		b.Fatalf("upload: %d %s", r.StatusCode, raw)
	}
	var env struct {
		Data struct {
			Imported int `json:"imported"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		b.Fatal(err)
	}
	return env.Data.Imported
}
