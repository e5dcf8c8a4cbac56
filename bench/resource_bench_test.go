package bench_test

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// BenchmarkResourceList: GET /api/resource/{doctype} with filters over
// BENCH_RESOURCE_DOCS documents of one DocType (default 100,000) from 8
// keep-alive clients (and one, for the latency without queueing) for 10 s
// per workload: equality on a search_index: 1 field (the goal: p99 < 50
// ms), the same in the object form ordered by a
// number, a range on that field with a second, unindexed filter, and a
// search_term (served by the DocType's trigram search index). It logs the
// plans of the indexed filter and of the search (EXPLAIN ANALYZE of the
// statements the list runs) for docs/BENCHMARKS.md.
func BenchmarkResourceList(b *testing.B) {
	n := envInt("BENCH_RESOURCE_DOCS", 100000)
	s := newSystem(b, nil, nil, 1) // the worker builds the field index
	auth := benchOrderDocType(b, s)
	customers := n / 20
	start := time.Now()
	err := s.DB.Transaction(func(tx *gorm.DB) error {
		return tx.Exec(`INSERT INTO docframe_documents (organization_id, doctype, name, docstatus, owner, modified_by, creation, modified, data)
			SELECT ?, 'Bench Order', 'BO-' || lpad(i::text, 7, '0'), 0, 'bench@wharf.test', 'bench@wharf.test',
			       now() - i * interval '1 second', now() - i * interval '1 second',
			       jsonb_build_object('customer', 'C' || (i % ?), 'status', (ARRAY['Open','Paid','Void'])[1 + i % 3],
			                          'amount', (i % 1000) + 0.5, 'note', 'note ' || i)
			FROM generate_series(0, ? - 1) AS i`, s.OrgID, customers, n).Error
	})
	if err != nil {
		b.Fatal(err)
	}
	// The indexes are built by the worker after the DocType's commit: the
	// customer field's and the search index (search_fields).
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var valid int
		s.DB.Raw(`SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indisvalid
			AND i.indrelid = 'docframe_documents'::regclass AND c.relname LIKE 'dfx\_%'`).Scan(&valid)
		if valid == 2 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the field and search indexes were not built")
		}
	}
	if err := s.DB.Exec("VACUUM ANALYZE docframe_documents").Error; err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d documents in %s", n, time.Since(start).Round(time.Second))

	var plan []string
	s.DB.Raw(`EXPLAIN (ANALYZE, BUFFERS) SELECT organization_id, doctype, name, docstatus, owner, modified_by, creation, modified, data
		FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND (data ->> 'customer') = ?
		ORDER BY modified DESC, name DESC LIMIT 20 OFFSET 0`, s.OrgID, "Bench Order", "C42").Scan(&plan)
	b.Logf("plan of the indexed filter:\n%s", strings.Join(plan, "\n"))
	plan = nil
	s.DB.Raw(`EXPLAIN (ANALYZE, BUFFERS) SELECT organization_id, doctype, name, docstatus, owner, modified_by, creation, modified, data
		FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND (name ILIKE ? OR (data ->> 'note') ILIKE ?)
		ORDER BY modified DESC, name DESC LIMIT 20 OFFSET 0`, s.OrgID, "Bench Order", "%note 4242%", "%note 4242%").Scan(&plan)
	b.Logf("plan of the search_term:\n%s", strings.Join(plan, "\n"))

	list := s.base + "/api/resource/Bench%20Order?"
	equality := func(r *rand.Rand) string {
		return "fields=" + url.QueryEscape(`["name","customer","amount"]`) + "&filters=" +
			url.QueryEscape(fmt.Sprintf(`[["customer","=","C%d"]]`, r.IntN(customers)))
	}
	for _, w := range []struct {
		name    string
		clients int
		query   func(r *rand.Rand) string
	}{
		{"indexed-equality-1-client", 1, equality},
		{"indexed-equality", 8, equality},
		{"indexed-object-ordered", 8, func(r *rand.Rand) string {
			return "fields=" + url.QueryEscape(`["*"]`) + "&order_by=amount%20desc&filters=" +
				url.QueryEscape(fmt.Sprintf(`{"customer": "C%d"}`, r.IntN(customers)))
		}},
		{"indexed-in-and-unindexed", 8, func(r *rand.Rand) string {
			a, c := r.IntN(customers), r.IntN(customers)
			return "limit=50&filters=" + url.QueryEscape(fmt.Sprintf(`[["customer","in",["C%d","C%d"]],["status","!=","Void"]]`, a, c))
		}},
		{"search-term", 8, func(r *rand.Rand) string { return fmt.Sprintf("search_term=note%%20%d", r.IntN(n)) }},
	} {
		b.Run(w.name, func(b *testing.B) {
			var lat latencies
			cpu0 := s.cpu()
			seed := uuid.New()
			elapsed := load(b, w.clients, &lat, func(_ int64, t time.Duration) bool { return t >= 10*time.Second }, func(i int64) error {
				r := rand.New(rand.NewPCG(uint64(i), uint64(seed.ID())))
				code, resp, err := call("GET", list+w.query(r), auth, nil)
				if err == nil && code == 200 && !strings.HasPrefix(string(resp), `{"data":[{`) {
					return fmt.Errorf("no rows: %s", resp)
				}
				return expect(code, resp, err, 200)
			})
			lat.report(b, elapsed, "req")
			s.cpu().sub(cpu0).report(b, len(lat.d), "req")
		})
	}
}

// BenchmarkResourceInserts: POST /api/resource/{doctype} of new documents
// from 16 keep-alive clients for 10 s, into the DocType of
// BenchmarkResourceList (a search_index field, so each insert also
// maintains its expression index), with the api and one worker. It reports
// documents a second, the latency of an insert, and the CPU a document.
func BenchmarkResourceInserts(b *testing.B) {
	s := newSystem(b, nil, nil, 1) // the worker builds the field index
	auth := benchOrderDocType(b, s)
	url := s.base + "/api/resource/Bench%20Order"
	var lat latencies
	cpu0 := s.cpu()
	b.ResetTimer()
	s.profile()
	elapsed := load(b, 16, &lat, func(_ int64, t time.Duration) bool { return t >= 10*time.Second }, func(i int64) error {
		doc := fmt.Sprintf(`{"customer": "C%d", "status": "%s", "amount": %d.5, "note": "note %d"}`,
			i%5000, []string{"Open", "Paid", "Void"}[i%3], i%1000, i)
		code, resp, err := call("POST", url, auth, []byte(doc))
		return expect(code, resp, err, 201)
	})
	b.StopTimer()
	var stored int64
	s.DB.Raw(`SELECT count(*) FROM docframe_documents WHERE doctype = 'Bench Order'`).Scan(&stored)
	if stored != int64(len(lat.d)) {
		b.Fatalf("%d documents stored for %d answered inserts", stored, len(lat.d))
	}
	lat.report(b, elapsed, "doc")
	s.cpu().sub(cpu0).report(b, len(lat.d), "doc")
}

// benchOrderDocType creates the resource benchmarks' DocType, Bench Order
// (customer with search_index, status, amount, note as its search field),
// and answers the admin's request headers.
func benchOrderDocType(b *testing.B, s *system) map[string]string {
	b.Helper()
	auth := map[string]string{"Authorization": "Bearer " + s.Admin.AccessToken, "Content-Type": "application/json"}
	code, body, err := call("POST", s.base+"/api/resource/DocType", auth, []byte(`{"name": "Bench Order", "search_fields": "note", "fields": [
		{"fieldname": "customer", "fieldtype": "Data", "search_index": 1},
		{"fieldname": "status", "fieldtype": "Select", "options": "Open\nPaid\nVoid"},
		{"fieldname": "amount", "fieldtype": "Float"},
		{"fieldname": "note", "fieldtype": "Data"}]}`))
	if err != nil || code != 201 {
		b.Fatalf("DocType: %d %s %v", code, body, err)
	}
	return auth
}
