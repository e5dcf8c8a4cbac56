package bench_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// BenchmarkContactSearchAfterImport (issue 21): 1,000,000 contacts written
// as an import writes them (one set-based INSERT, gin_pending_list_limit
// 64 MB, no message yet), and no ANALYZE after: the planner's statistics
// are those of the empty table, and autovacuum is off for the table so that
// they stay so during the run. Then GET /api/contacts?search=<6 digits of a
// number> from 16 keep-alive clients for 10 s; each answer must be the one
// contact with those digits, first as the rows were left ("stale"), then
// with the pending list merged but the statistics still the empty table's
// ("stale-statistics"), then after what the import job does after a big
// import ("refreshed": ANALYZE and the trigram index's pending list
// merged). BENCH_CONTACTS changes the size.
func BenchmarkContactSearchAfterImport(b *testing.B) {
	n := envInt("BENCH_CONTACTS", 1_000_000)
	s := newSystem(b, nil, nil, 0)
	start := time.Now()
	err := s.DB.Transaction(func(tx *gorm.DB) error {
		for _, q := range []string{
			"ALTER TABLE contacts SET (autovacuum_enabled = false)",
			"SET LOCAL session_replication_role = replica",
			"SET LOCAL gin_pending_list_limit = '64MB'",
		} {
			if err := tx.Exec(q).Error; err != nil {
				return err
			}
		}
		if err := tx.Exec(`INSERT INTO contacts (organization_id, account_id, phone_number, name, profile_name, metadata)
			SELECT ?, ?, '+1559' || lpad(i::text, 7, '0'),
			       (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','Ken','Radia','Leslie'])[1 + i % 10] || ' ' || i,
			       '', '{}'
			FROM generate_series(0, ? - 1) AS i`, s.OrgID, s.AccountID, n).Error; err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO contact_counts (organization_id, account_id, shard, n) VALUES (?, ?, 0, ?)
			ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = contact_counts.n + EXCLUDED.n`,
			s.OrgID, s.AccountID, n).Error
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.DB.Exec("ALTER TABLE contacts RESET (autovacuum_enabled)") })
	b.Logf("inserted %d contacts in %s, not analyzed", n, time.Since(start).Round(time.Second))
	auth := map[string]string{"Authorization": "Bearer " + s.Admin.AccessToken}
	run := func(b *testing.B) {
		var lat latencies
		seed := uuid.New()
		cpu0 := s.cpu()
		b.ResetTimer()
		elapsed := load(b, 16, &lat, func(_ int64, t time.Duration) bool { return t >= 10*time.Second }, func(i int64) error {
			r := rand.New(rand.NewPCG(uint64(i), uint64(seed.ID())))
			// The last 6 digits of a number: it matches, and so may a few
			// others holding them elsewhere (after the +1559 prefix).
			k := r.IntN(n)
			digits := fmt.Sprintf("%07d", k)[1:]
			code, resp, err := call("GET", s.base+"/api/contacts?limit=20&search="+digits, auth, nil)
			if err := expect(code, resp, err, 200); err != nil {
				return err
			}
			var list struct {
				Items []struct {
					PhoneNumber string `json:"phone_number"`
				} `json:"items"`
			}
			if err := data(resp, &list); err != nil {
				return err
			}
			page := list.Items
			if len(page) == 0 {
				return fmt.Errorf("search %s: nothing found", digits)
			}
			for _, c := range page {
				if !strings.Contains(c.PhoneNumber, digits) {
					return fmt.Errorf("search %s: answered %s", digits, c.PhoneNumber)
				}
			}
			return nil
		})
		b.StopTimer()
		lat.report(b, elapsed, "search")
		s.cpu().sub(cpu0).report(b, len(lat.d), "search")
	}
	// As the rows were left: statistics of the empty table, and the
	// trigram index's pending list full (every search reads it).
	b.Run("stale", run)
	// The pending list merged, the statistics still the empty table's: the
	// search's plan must not depend on them (issue 21: "whatever the
	// statistics").
	if err := s.DB.Exec("SELECT gin_clean_pending_list('contacts_search'::regclass)").Error; err != nil {
		b.Fatal(err)
	}
	b.Run("stale-statistics", run)
	// As an import of that size leaves them (internal/dataops,
	// refreshContactStats): analyzed, the pending list merged.
	if err := s.DB.Exec("ANALYZE contacts").Error; err != nil {
		b.Fatal(err)
	}
	b.Run("refreshed", run)
}
