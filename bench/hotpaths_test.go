package bench_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/platform"
	"wharf/platformsim"
)

// These benchmarks are the workloads of docs/BENCHMARKS.md "Hot paths": fixed
// workloads measured from outside, as a client would (run them with
// -benchtime=1x; make bench does). BENCH_STATUSES, BENCH_TEMPLATE_SECONDS
// and BENCH_CONTACTS change their size.

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkStatusWebhooks: 10,000 signed webhooks with one "delivered" status
// each, for 10,000 sent campaign messages, from 32 keep-alive clients while a
// worker applies them. Accepted/s and latencies are the POSTs';
// applied/s counts from the first POST until the campaign's delivered_count
// reads 10,000 (rows-applied/s: until every recipient row reads delivered,
// without the counter interval); lag is, per webhook, the time from its
// acknowledgement until the counter included it.
func BenchmarkStatusWebhooks(b *testing.B) {
	n := envInt("BENCH_STATUSES", 10000)
	s := newSystem(b, nil, nil, 1)
	tmpl := s.SeedTemplate(s.OrgID, s.AccountID, "order_update", "Hi {{1}}", false)
	id := s.sentCampaign(tmpl.ID.String(), n)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"messages","value":{
"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100001","phone_number_id":%q},
"statuses":[{"id":"wamid.bench%d","status":"delivered","timestamp":"%d","recipient_id":"1556%07d"}]}}]}]}`,
			s.WABA.ID, s.PhoneNumberID(), i, time.Now().Unix(), i))
	}
	url := s.base + "/api/webhook"
	var lat latencies
	var mu sync.Mutex
	acked := make([]time.Time, 0, n)
	stop, sampled := make(chan struct{}), make(chan struct{})
	var samples []sample
	var rowsDone time.Time // when every recipient row read delivered
	cpu0 := s.cpu()
	b.ResetTimer()
	s.profile()
	start := time.Now()
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				samples = append(samples, sample{time.Now(), s.counter(id, "delivered_count")})
				if rowsDone.IsZero() && s.deliveredRows(id) >= n {
					rowsDone = time.Now()
				}
			}
		}
	}()
	elapsed := load(b, 32, &lat, func(i int64, _ time.Duration) bool { return i >= int64(n) }, func(i int64) error {
		body := bodies[i]
		code, resp, err := call("POST", url, map[string]string{platform.SignatureHeader: platform.Sign(s.AppSecret, body)}, body)
		mu.Lock()
		acked = append(acked, time.Now())
		mu.Unlock()
		return expect(code, resp, err, 200)
	})
	done := waitFor(b, 10*time.Minute, "every status applied", func() bool { return s.counter(id, "delivered_count") >= n })
	b.StopTimer()
	close(stop)
	<-sampled // the sampler owns samples until it has returned
	samples = append(samples, sample{done, n})
	lat.report(b, elapsed, "accepted")
	b.ReportMetric(float64(n)/done.Sub(start).Seconds(), "applied/s")
	if !rowsDone.IsZero() {
		// The same without the campaign counter interval: until the rows
		// themselves were updated (sampled every 50 ms).
		b.ReportMetric(float64(n)/rowsDone.Sub(start).Seconds(), "rows-applied/s")
	}
	reportLag(b, acked, samples)
	s.cpu().sub(cpu0).report(b, n, "webhook")
}

// sample is a counter reading.
type sample struct {
	at    time.Time
	count int
}

// reportLag reports the lag from each acknowledgement to the first sample
// whose count includes it (the k-th acknowledged status is counted once the
// counter reaches k).
func reportLag(b *testing.B, acked []time.Time, samples []sample) {
	slices.SortFunc(acked, func(a, b time.Time) int { return a.Compare(b) })
	lags := make([]time.Duration, 0, len(acked))
	j := 0
	for k, at := range acked {
		for j < len(samples)-1 && samples[j].count < k+1 {
			j++
		}
		lags = append(lags, max(samples[j].at.Sub(at), 0))
	}
	slices.Sort(lags)
	if len(lags) == 0 {
		return
	}
	b.ReportMetric(lags[len(lags)/2].Seconds(), "lag-p50-s")
	b.ReportMetric(lags[len(lags)*99/100].Seconds(), "lag-p99-s")
}

// sentCampaign creates a completed campaign of n recipients that the
// provider accepted (wamid.bench<i>), as if it had just been sent.
func (s *system) sentCampaign(templateID string, n int) string {
	var c struct{ ID string }
	s.Do("POST", "/api/campaigns", map[string]any{"name": "Bench", "account_id": s.AccountID, "template_id": templateID,
		"variable_mapping": map[string]string{"1": "name"}}, s.Admin.Auth()).Expect(s.b, 201).Into(s.b, &c)
	err := s.DB.Exec(`INSERT INTO campaign_recipients (campaign_id, organization_id, phone_number, name, status,
		platform_message_id, sent_at, attempts)
		SELECT ?, ?, '+1556' || lpad(i::text, 7, '0'), 'Customer', 'sent', 'wamid.bench' || i, now(), 1
		FROM generate_series(0, ? - 1) AS i`, c.ID, s.OrgID, n).Error
	if err != nil {
		s.b.Fatal(err)
	}
	s.DB.Exec(`UPDATE campaigns SET status = 'completed', started_at = now(), completed_at = now(), total_recipients = ?,
		sent_count = ? WHERE id = ?`, n, n, c.ID)
	return c.ID
}

// deliveredRows counts the campaign's recipients whose status is delivered.
func (s *system) deliveredRows(id string) int {
	var v int
	s.DB.Raw("SELECT count(*) FROM campaign_recipients WHERE campaign_id = ? AND status = 'delivered'", id).Scan(&v)
	return v
}

func (s *system) counter(id, field string) int {
	var v int
	s.DB.Raw("SELECT "+field+" FROM campaigns WHERE id = ?", id).Scan(&v)
	return v
}

// BenchmarkTemplateSendsAPIKey: POST /api/messages/template with an API key,
// 32 keep-alive clients for 10 s, each request to a new phone number, with a
// worker sending beside the api; then until every send reached the
// provider. req/s and latencies are the POSTs'; drained/s counts from the
// first request until the provider has the last send.
func BenchmarkTemplateSendsAPIKey(b *testing.B) {
	seconds := envInt("BENCH_TEMPLATE_SECONDS", 10)
	s := newSystem(b, nil, nil, 1)
	s.SeedTemplate(s.OrgID, s.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	var key struct{ Key string }
	s.Do("POST", "/api/api-keys", map[string]any{"name": "bench"}, s.Admin.Auth()).Expect(b, 201).Into(b, &key)
	url := s.base + "/api/messages/template"
	headers := map[string]string{"X-API-Key": key.Key}
	var lat latencies
	cpu0 := s.cpu()
	b.ResetTimer()
	s.profile()
	start := time.Now()
	limit := time.Duration(seconds) * time.Second
	elapsed := load(b, 32, &lat, func(_ int64, t time.Duration) bool { return t >= limit }, func(i int64) error {
		body, _ := json.Marshal(map[string]any{"phone_number": fmt.Sprintf("+1557%07d", i), "template_name": "order_update",
			"template_params": map[string]string{"1": "Ann", "2": strconv.FormatInt(i, 10)}})
		code, resp, err := call("POST", url, headers, body)
		return expect(code, resp, err, 202)
	})
	sent := len(lat.d)
	done := waitFor(b, 10*time.Minute, "every send at the provider", func() bool {
		return s.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: "/messages"}) >= sent
	})
	b.StopTimer()
	lat.report(b, elapsed, "req")
	b.ReportMetric(float64(sent)/done.Sub(start).Seconds(), "drained/s")
	s.cpu().sub(cpu0).report(b, sent, "msg")
}

// contactNames are first names for the seeded contacts; with a number they
// make names that a fragment search can find.
var contactNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Leslie"}

// seedContacts inserts n contacts of the system's organization with
// distinct phone numbers and names, recent activity spread over a year. The
// rows go in with triggers off (the maintained counts are set afterwards in
// one statement): a million row-by-row count updates would make the setup,
// not the benchmark, the slow part.
func (s *system) seedContacts(n int) {
	start := time.Now()
	err := s.DB.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL session_replication_role = replica").Error; err != nil {
			return err
		}
		if err := tx.Exec(`INSERT INTO contacts (organization_id, account_id, phone_number, name, profile_name, metadata,
			last_message_at, created_at, updated_at)
			SELECT ?, ?, '+1558' || lpad(i::text, 7, '0'),
			       (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','Ken','Radia','Leslie'])[1 + i % 10] || ' ' || i,
			       '', '{}', now() - (i % 525600) * interval '1 minute', now(), now()
			FROM generate_series(0, ? - 1) AS i`, s.OrgID, s.AccountID, n).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO contact_counts (organization_id, account_id, shard, n)
			SELECT organization_id, COALESCE(account_id, '00000000-0000-0000-0000-000000000000'), 0, count(*)
			FROM contacts WHERE organization_id = ? GROUP BY 1, 2
			ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = contact_counts.n + EXCLUDED.n`, s.OrgID).Error
	})
	if err != nil {
		s.b.Fatal(err)
	}
	if err := s.DB.Exec("VACUUM ANALYZE contacts").Error; err != nil {
		s.b.Fatal(err)
	}
	s.b.Logf("seeded %d contacts in %s", n, time.Since(start).Round(time.Second))
}

// BenchmarkContacts: GET /api/contacts from 16 keep-alive clients for 10 s
// each, at BENCH_CONTACTS contacts (default 100,000; the target is 1,000,000):
// pages drawn from all pages and from the first 20, a search for 6 digits
// of a number, and a search for a name fragment.
func BenchmarkContacts(b *testing.B) {
	n := envInt("BENCH_CONTACTS", 100000)
	s := newSystem(b, nil, nil, 1)
	s.seedContacts(n)
	auth := map[string]string{"Authorization": "Bearer " + s.Admin.AccessToken}
	pages := n / 50
	for _, w := range []struct {
		name  string
		query func(r *rand.Rand) string
	}{
		{"list-any-page", func(r *rand.Rand) string { return fmt.Sprintf("limit=50&page=%d", 1+r.IntN(pages)) }},
		{"list-first-20-pages", func(r *rand.Rand) string { return fmt.Sprintf("limit=50&page=%d", 1+r.IntN(min(20, pages))) }},
		{"search-6-digits", func(r *rand.Rand) string {
			return "limit=20&search=" + fmt.Sprintf("%07d", r.IntN(n))[1:]
		}},
		{"search-name-fragment", func(r *rand.Rand) string {
			name := contactNames[r.IntN(len(contactNames))]
			return fmt.Sprintf("limit=20&search=%s%%20%d", name[1:], r.IntN(n/10))
		}},
	} {
		b.Run(w.name, func(b *testing.B) {
			var lat latencies
			cpu0 := s.cpu()
			seed := uuid.New()
			elapsed := load(b, 16, &lat, func(_ int64, t time.Duration) bool { return t >= 10*time.Second }, func(i int64) error {
				r := rand.New(rand.NewPCG(uint64(i), uint64(seed.ID())))
				code, resp, err := call("GET", s.base+"/api/contacts?"+w.query(r), auth, nil)
				return expect(code, resp, err, 200)
			})
			lat.report(b, elapsed, "req")
			s.cpu().sub(cpu0).report(b, len(lat.d), "req")
		})
	}
}
