package bench_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/testenv"
	"wharf/platformsim"
)

// These benchmarks are fixed workloads: run them with -benchtime=1x (make
// bench does). BENCH_CAMPAIGN_RECIPIENTS changes the size of the unpaced
// campaign (default 20,000; the target is 100,000), BENCH_PACED_CAMPAIGNS the
// number of paced ones (default 200).

// shop is one paced account of a many-campaigns system.
type shop struct {
	phoneID, accountID, templateID string
}

// shops connects n accounts (one phone number each, in one business account)
// to the system's organization, each with an approved template, and sets
// their tier.
func (s *system) shops(n int, tier string) []shop {
	numbers := make([]platformsim.PhoneNumber, n)
	for i := range numbers {
		numbers[i] = platformsim.PhoneNumber{DisplayPhoneNumber: fmt.Sprintf("+1 555-030-%04d", i), VerifiedName: fmt.Sprintf("Shop %d", i)}
	}
	waba := s.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Shops", AccessToken: "token-" + testenv.RandomKey()[:16],
		PhoneNumbers: numbers})
	out := make([]shop, n)
	for i, ph := range waba.PhoneNumbers {
		var a struct{ ID string }
		s.Do("POST", "/api/accounts", map[string]any{"name": fmt.Sprintf("Shop %d", i), "phone_number_id": ph.ID,
			"business_account_id": waba.ID, "access_token": waba.AccessToken}, s.Admin.Auth()).Expect(s.b, 201).Into(s.b, &a)
		s.Do("POST", "/api/accounts/"+a.ID+"/test", nil, s.Admin.Auth()).Expect(s.b, 200)
		s.Do("PUT", "/api/accounts/"+a.ID, map[string]any{"messaging_tier": tier}, s.Admin.Auth()).Expect(s.b, 200)
		out[i] = shop{phoneID: ph.ID, accountID: a.ID}
	}
	// The provider knows templates per business account: create it there
	// once, and record it for every account here.
	seeded := s.WABA
	s.WABA = waba
	first := s.SeedTemplate(s.OrgID, out[0].accountID, "offer", "Hi {{1}}, your order {{2}} shipped", false)
	s.WABA = seeded
	out[0].templateID = first.ID.String()
	for i := 1; i < n; i++ {
		t := first
		t.ID, t.AccountID = uuid.New(), uuid.MustParse(out[i].accountID)
		if err := s.DB.Create(&t).Error; err != nil {
			s.b.Fatal(err)
		}
		out[i].templateID = t.ID.String()
	}
	return out
}

// campaign creates a draft campaign of n recipients for an account.
func (s *system) campaign(accountID, templateID string, n int) string {
	var c struct{ ID string }
	s.Do("POST", "/api/campaigns", map[string]any{"name": "Bench", "account_id": accountID, "template_id": templateID,
		"variable_mapping": map[string]string{"1": "name", "2": "order_id"}}, s.Admin.Auth()).Expect(s.b, 201).Into(s.b, &c)
	for start := 0; start < n; start += 50000 {
		batch := make([]map[string]any, 0, 50000)
		for i := start; i < min(start+50000, n); i++ {
			batch = append(batch, map[string]any{"phone_number": fmt.Sprintf("+1556%07d", i), "name": fmt.Sprintf("Customer %d", i),
				"order_id": fmt.Sprintf("A-%06d", i)})
		}
		s.Do("POST", "/api/campaigns/"+c.ID+"/recipients/import", map[string]any{"recipients": batch}, s.Admin.Auth()).Expect(s.b, 200)
	}
	return c.ID
}

func (s *system) start(id string) {
	s.Do("POST", "/api/campaigns/"+id+"/start", nil, s.Admin.Auth()).Expect(s.b, 200)
}

// sends counts the provider's accepted sends of a phone number.
func (s *system) sends(phoneID string) int {
	return s.Sim.MessageCount(platformsim.MessageFilter{PhoneNumberID: phoneID})
}

// workerStats reports the workers' CPU (cores over elapsed) and peak memory.
func (s *system) workerStats(b *testing.B, c cpu, elapsed time.Duration) {
	var peak int64
	for _, w := range s.workers {
		_, rss := procStats(w.Cmd.Process.Pid)
		peak = max(peak, rss)
	}
	b.ReportMetric(c.worker.Seconds()/elapsed.Seconds(), "worker-cores")
	b.ReportMetric(c.postgres.Seconds()/elapsed.Seconds(), "pg-cores")
	b.ReportMetric(float64(peak)/(1<<20), "worker-peak-MiB")
}

// dbStats are the benchmark database's transaction and row counters.
type dbStats struct{ xacts, updated, sessions int64 }

// dbStats reads them. PostgreSQL publishes a backend's counters at most
// once a second, and an idle backend's within ten seconds: the reading
// waits for that so that the last sends are counted.
func (s *system) dbStats() dbStats {
	time.Sleep(11 * time.Second)
	var d dbStats
	err := s.DB.Raw(`SELECT xact_commit + xact_rollback, tup_updated, sessions FROM pg_stat_database WHERE datname = current_database()`).
		Row().Scan(&d.xacts, &d.updated, &d.sessions)
	if err != nil {
		s.b.Fatal(err)
	}
	return d
}

func (d dbStats) sub(o dbStats) dbStats {
	return dbStats{d.xacts - o.xacts, d.updated - o.updated, d.sessions - o.sessions}
}

// report adds the transactions (statements outside a transaction count one
// each) and row updates per unit of work, and the database sessions opened
// (a pool that closes and reopens connections costs PostgreSQL a backend
// start each time).
func (d dbStats) report(b *testing.B, n int, unit string) {
	b.ReportMetric(float64(d.xacts)/float64(n), "pg-xacts/"+unit)
	b.ReportMetric(float64(d.updated)/float64(n), "pg-rows-updated/"+unit)
	b.ReportMetric(float64(d.sessions), "pg-sessions")
}

// BenchmarkCampaignUnlimited sends one TIER_UNLIMITED campaign, from the
// start until the provider has every send, with 1, 2 and 4 worker processes
// (default settings), and reports the CPU spent per message.
func BenchmarkCampaignUnlimited(b *testing.B) {
	n := envInt("BENCH_CAMPAIGN_RECIPIENTS", 20000)
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s := newSystem(b, nil, nil, workers)
			s.Do("PUT", "/api/accounts/"+s.AccountID, map[string]any{"messaging_tier": "TIER_UNLIMITED"}, s.Admin.Auth()).Expect(b, 200)
			tmpl := s.SeedTemplate(s.OrgID, s.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
			id := s.campaign(s.AccountID, tmpl.ID.String(), n)
			cpu0, db0 := s.cpu(), s.dbStats()
			b.ResetTimer()
			start := time.Now()
			s.start(id)
			done := waitFor(b, 30*time.Minute, "every send at the provider", func() bool { return s.sends(s.PhoneNumberID()) >= n })
			b.StopTimer()
			elapsed := done.Sub(start)
			c := s.cpu().sub(cpu0)
			b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
			c.report(b, n, "msg")
			s.workerStats(b, c, elapsed)
			if got := s.sends(s.PhoneNumberID()); got != n {
				b.Fatalf("the provider received %d sends for %d recipients", got, n)
			}
			s.dbStats().sub(db0).report(b, n, "msg")
		})
	}
}

// BenchmarkManyCampaigns starts BENCH_PACED_CAMPAIGNS (200) campaigns on as
// many TIER_1K accounts together and measures each one's rate over 30 s
// (after a 3 s warm-up) with 1, 2 and 4 worker processes (default
// settings): every campaign should send its tier's 10 msg/s.
func BenchmarkManyCampaigns(b *testing.B) {
	n := envInt("BENCH_PACED_CAMPAIGNS", 200)
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s := newSystem(b, nil, nil, workers)
			shops := s.shops(n, "TIER_1K")
			ids := make([]string, n)
			for i, sh := range shops {
				ids[i] = s.campaign(sh.accountID, sh.templateID, 500)
			}
			b.ResetTimer()
			for _, id := range ids {
				s.start(id)
			}
			time.Sleep(3 * time.Second)
			cpu0 := s.cpu()
			from := time.Now()
			time.Sleep(30 * time.Second)
			to := time.Now()
			c := s.cpu().sub(cpu0)
			b.StopTimer()
			counts := map[string]int{}
			for _, m := range s.Sim.Messages(platformsim.MessageFilter{}) {
				if !m.SentAt.Before(from) && m.SentAt.Before(to) {
					counts[m.PhoneNumberID]++
				}
			}
			rates := make([]float64, n)
			total := 0
			for i, sh := range shops {
				rates[i] = float64(counts[sh.phoneID]) / to.Sub(from).Seconds()
				total += counts[sh.phoneID]
			}
			slices.Sort(rates)
			b.ReportMetric(rates[0], "min-msgs/s")
			b.ReportMetric(rates[len(rates)/2], "median-msgs/s")
			b.ReportMetric(rates[len(rates)-1], "max-msgs/s")
			b.ReportMetric(float64(total)/to.Sub(from).Seconds(), "total-msgs/s")
			c.report(b, total, "msg")
			s.workerStats(b, c, to.Sub(from))
			for _, id := range ids {
				s.Do("POST", "/api/campaigns/"+id+"/cancel", nil, s.Admin.Auth())
			}
		})
	}
}

// BenchmarkCampaignPacing runs a campaign per tier and measures the rate the
// provider saw over 10 s, after a 2 s warm-up, with two worker processes.
func BenchmarkCampaignPacing(b *testing.B) {
	for _, tier := range []struct {
		name string
		rate int
	}{{"TIER_1K", 10}, {"TIER_10K", 30}, {"TIER_100K", 80}} {
		b.Run(tier.name, func(b *testing.B) {
			s := newSystem(b, nil, nil, 2)
			s.Do("PUT", "/api/accounts/"+s.AccountID, map[string]any{"messaging_tier": tier.name}, s.Admin.Auth()).Expect(b, 200)
			tmpl := s.SeedTemplate(s.OrgID, s.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
			id := s.campaign(s.AccountID, tmpl.ID.String(), tier.rate*20)
			s.start(id)
			time.Sleep(2 * time.Second)
			from := time.Now()
			time.Sleep(10 * time.Second)
			to := time.Now()
			got := 0
			for _, m := range s.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: s.PhoneNumberID()}) {
				if !m.SentAt.Before(from) && m.SentAt.Before(to) {
					got++
				}
			}
			s.Do("POST", "/api/campaigns/"+id+"/cancel", nil, s.Admin.Auth()).Expect(b, 200)
			rate := float64(got) / to.Sub(from).Seconds()
			b.ReportMetric(rate, "msgs/s")
			b.ReportMetric(100*(rate-float64(tier.rate))/float64(tier.rate), "error-%")
		})
	}
}
