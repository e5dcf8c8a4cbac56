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

// BenchmarkImportContacts10k: one POST /api/import of a 10,000-row contacts
// file (phone number, name, two tags; every row new), from the request
// until the answer that carries the result, with the api and one worker
// as processes of their own. Each iteration imports new numbers into the
// same organization, so later iterations also pay for the contacts the
// earlier ones created.
func BenchmarkImportContacts10k(b *testing.B) {
	s := newSystem(b, nil, nil, 1)
	const n = 10000
	files := make([][]byte, b.N)
	for it := range files {
		var file bytes.Buffer
		file.WriteString("phone_number,name,tags\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&file, "+1556%02d%05d,Contact %d,\"customer, batch%d\"\n", it, i, i, i%10)
		}
		files[it] = file.Bytes()
	}
	// One small import first, so that the worker's connections and the
	// statements are warm, as they are on a running system.
	s.importFile(b, []byte("phone_number\n+15550000001\n"))
	cpu0 := s.cpu()
	var total time.Duration
	b.ResetTimer()
	s.profile()
	for it := 0; it < b.N; it++ {
		start := time.Now()
		res := s.importFile(b, files[it])
		total += time.Since(start)
		if res.Created != n || res.Errors != 0 {
			b.Fatalf("result %+v", res)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/import")
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "rows/s")
	s.cpu().sub(cpu0).report(b, n*b.N, "row")
}

func (s *system) importFile(b *testing.B, data []byte) (res struct{ Created, Errors int }) {
	b.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("table", "contacts")
	fw, _ := mw.CreateFormFile("file", "contacts.csv")
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", s.base+"/api/import", &body)
	req.Header.Set("Authorization", "Bearer "+s.Admin.AccessToken)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Body.Close()
	raw, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 {
		b.Fatalf("import: %d %s", r.StatusCode, raw)
	}
	var env struct {
		Data struct {
			Created int `json:"created"`
			Errors  int `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		b.Fatal(err)
	}
	res.Created, res.Errors = env.Data.Created, env.Data.Errors
	return res
}
