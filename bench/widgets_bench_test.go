package bench_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// BenchmarkWidgetData: GET /api/widgets/{id}/data over last month from
// BENCH_WIDGET_CLIENTS keep-alive clients (default 1: one dashboard's
// latency; 4 shows the queueing on two cores) for 10 s each, at BENCH_WIDGET_MESSAGES messages in
// one organization (default 1,000,000, spread over the last 365 days:
// about 83,000 a month), for a number widget (outgoing messages), a daily
// chart, and a bar chart grouped by status. Goal: p99 < 100 ms.
// BENCH_EXPLAIN=1 logs the plans of the statements behind them.
func BenchmarkWidgetData(b *testing.B) {
	n := envInt("BENCH_WIDGET_MESSAGES", 1000000)
	clients := envInt("BENCH_WIDGET_CLIENTS", 1)
	s := newSystem(b, nil, nil, 0)
	s.seedMessages(n)
	auth := map[string]string{"Authorization": "Bearer " + s.Admin.AccessToken}
	now := time.Now().UTC()
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	from, to := first.AddDate(0, -1, 0), first.AddDate(0, 0, -1)
	q := fmt.Sprintf("from=%s&to=%s", from.Format(time.DateOnly), to.Format(time.DateOnly))
	for _, w := range []struct {
		name string
		body string
	}{
		{"number-outgoing", `{"name": "Sent", "data_source": "messages", "metric": "count",
			"filters": [{"field": "direction", "operator": "equals", "value": "outgoing"}]}`},
		{"daily-chart", `{"name": "Daily", "data_source": "messages", "metric": "count", "display_type": "chart", "chart_type": "line"}`},
		{"grouped-bar", `{"name": "By status", "data_source": "messages", "metric": "count", "display_type": "chart", "chart_type": "bar",
			"group_by_field": "status"}`},
	} {
		code, resp, err := call("POST", s.base+"/api/widgets", auth, []byte(w.body))
		if err := expect(code, resp, err, 201); err != nil {
			b.Fatal(err)
		}
		var created struct{ ID string }
		if err := data(resp, &created); err != nil {
			b.Fatal(err)
		}
		b.Run(w.name, func(b *testing.B) {
			url := s.base + "/api/widgets/" + created.ID + "/data?" + q
			code, resp, err := call("GET", url, auth, nil)
			if err := expect(code, resp, err, 200); err != nil {
				b.Fatal(err)
			}
			var d struct{ Value float64 }
			_ = data(resp, &d)
			b.Logf("%s over %s: value %v", w.name, q, d.Value)
			var lat latencies
			cpu0 := s.cpu()
			elapsed := load(b, clients, &lat, func(_ int64, t time.Duration) bool { return t >= 10*time.Second }, func(int64) error {
				code, resp, err := call("GET", url, auth, nil)
				return expect(code, resp, err, 200)
			})
			lat.report(b, elapsed, "req")
			s.cpu().sub(cpu0).report(b, len(lat.d), "req")
		})
	}
	if os.Getenv("BENCH_EXPLAIN") != "" {
		days := int(to.Sub(from).Hours()/24) + 1
		s.explain(from, to.AddDate(0, 0, 1), from.AddDate(0, 0, -days))
	}
}

// seedMessages stores n messages of the organization, one statement, spread
// over the last 365 days, in both directions and several types and
// statuses, between 1,000 contacts.
func (s *system) seedMessages(n int) {
	start := time.Now()
	err := s.DB.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL session_replication_role = replica").Error; err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO contacts (organization_id, account_id, phone_number, name)
			SELECT ?, ?, '+1559' || lpad(i::text, 7, '0'), 'Contact ' || i FROM generate_series(0, 999) i`, s.OrgID, s.AccountID).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, occurred_at, created_at)
			SELECT ?, c.ids[1 + i % 1000], ?, CASE WHEN i % 3 = 0 THEN 'incoming' ELSE 'outgoing' END,
			       (ARRAY['text','text','text','image','template'])[1 + i % 5],
			       CASE WHEN i % 3 = 0 THEN 'received' ELSE (ARRAY['sent','delivered','read','read','failed'])[1 + i % 5] END,
			       now() - (i % 525600) * interval '1 minute', now() - (i % 525600) * interval '1 minute'
			FROM generate_series(0, ? - 1) AS i,
			     (SELECT array_agg(id) AS ids FROM contacts WHERE organization_id = ?) c`, s.OrgID, s.AccountID, n, s.OrgID).Error
	})
	if err != nil {
		s.b.Fatal(err)
	}
	if err := s.DB.Exec("VACUUM ANALYZE messages").Error; err != nil {
		s.b.Fatal(err)
	}
	s.b.Logf("seeded %d messages in %s", n, time.Since(start).Round(time.Second))
}

// explain logs the plans of the statements the three widgets run (the
// shapes internal/widgets builds, with the period's bounds).
func (s *system) explain(from, end, prevFrom time.Time) {
	for _, q := range []string{
		`SELECT COALESCE(count(*) FILTER (WHERE m.created_at >= $2), 0)::float8, COALESCE(count(*) FILTER (WHERE m.created_at < $2), 0)::float8
		 FROM messages m WHERE m.organization_id = $1 AND m.created_at >= $4 AND m.created_at < $3 AND (m.direction = 'outgoing')`,
		`SELECT to_char(g.day, 'YYYY-MM-DD'), COALESCE(v.val, 0)::float8
		 FROM (SELECT CAST($2 AS date) + i AS day FROM generate_series(0, 30) i) g
		 LEFT JOIN (SELECT (m.created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS val FROM messages m
		   WHERE m.organization_id = $1 AND m.created_at >= $2 AND m.created_at < $3 AND $4::timestamptz IS NOT NULL GROUP BY 1) v ON v.day = g.day ORDER BY g.day`,
		`SELECT COALESCE(m.status, ''), count(*)::float8 FROM messages m WHERE m.organization_id = $1 AND m.created_at >= $2 AND m.created_at < $3
		 AND $4::timestamptz IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 50`,
	} {
		var lines []string
		rows, err := s.DB.Raw("EXPLAIN (ANALYZE, BUFFERS) "+q, s.OrgID, from, end, prevFrom).Rows()
		if err != nil {
			s.b.Fatal(err)
		}
		for rows.Next() {
			var l string
			_ = rows.Scan(&l)
			lines = append(lines, l)
		}
		rows.Close()
		s.b.Logf("EXPLAIN %s\n%s", strings.Join(strings.Fields(q), " "), strings.Join(lines, "\n"))
	}
}
