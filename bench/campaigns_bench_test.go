package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// These benchmarks are fixed workloads: run them with -benchtime=1x (make
// bench does). BENCH_CAMPAIGN_RECIPIENTS changes the size of the big one.

func campaignFixture(b *testing.B, tier string, env map[string]string, sim func(*platformsim.Config)) (*apptest.Fixture, string) {
	base := map[string]string{"LOG_LEVEL": "error", "RATE_LIMIT_BULK_PER_MINUTE": "1000", "RATE_LIMIT_PER_MINUTE": "100000"}
	for k, v := range env {
		base[k] = v
	}
	f := apptest.NewFixture(b, base, sim)
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": tier}, f.Admin.Auth()).Expect(b, 200)
	tmpl := f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	return f, tmpl.ID.String()
}

func createCampaign(b *testing.B, f *apptest.Fixture, templateID string, n int) string {
	var c struct{ ID string }
	f.Do("POST", "/api/campaigns", map[string]any{"name": "Bench", "account_id": f.AccountID, "template_id": templateID,
		"variable_mapping": map[string]string{"1": "name", "2": "order_id"}}, f.Admin.Auth()).Expect(b, 201).Into(b, &c)
	for start := 0; start < n; start += 50000 {
		batch := make([]map[string]any, 0, 50000)
		for i := start; i < min(start+50000, n); i++ {
			batch = append(batch, map[string]any{"phone_number": fmt.Sprintf("+1556%07d", i), "name": fmt.Sprintf("Customer %d", i),
				"order_id": fmt.Sprintf("A-%06d", i)})
		}
		f.Do("POST", "/api/campaigns/"+c.ID+"/recipients/import", map[string]any{"recipients": batch}, f.Admin.Auth()).Expect(b, 200)
	}
	return c.ID
}

func counter(f *apptest.Fixture, id, field string) int {
	var v int
	f.DB.Raw("SELECT "+field+" FROM campaigns WHERE id = ?", id).Scan(&v)
	return v
}

// procStats reads a process's CPU seconds and peak resident memory.
func procStats(pid int) (cpu time.Duration, peakRSS int64) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		cpu = time.Duration(utime+stime) * time.Second / 100 // clock ticks (USER_HZ = 100)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
				peakRSS = kb << 10
			}
		}
	}
	return cpu, peakRSS
}

// BenchmarkCampaignUnlimited sends a 100,000-recipient TIER_UNLIMITED
// campaign through a worker process (CAMPAIGN_LANES lanes) to the simulator
// with its throughput cap removed, then measures how long "delivered"
// statuses for every message take to show in the campaign's counters.
func BenchmarkCampaignUnlimited(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("BENCH_CAMPAIGN_RECIPIENTS")); err == nil && v > 0 {
		n = v
	}
	lanes := os.Getenv("BENCH_CAMPAIGN_LANES")
	if lanes == "" {
		lanes = "16"
	}
	f, templateID := campaignFixture(b, "TIER_UNLIMITED", map[string]string{"CAMPAIGN_LANES": lanes, "CAMPAIGN_CONCURRENCY": lanes},
		func(c *platformsim.Config) {
			c.ThroughputPerSecond = -1
			c.SentAfter, c.DeliveredAfter, c.ReadAfter = -1, -1, -1
		})
	id := createCampaign(b, f, templateID, n)
	w := f.StartWorkerProcess(map[string]string{"CAMPAIGN_LANES": lanes, "CAMPAIGN_CONCURRENCY": lanes})
	time.Sleep(2 * time.Second) // the worker connects
	cpu0, _ := procStats(w.Cmd.Process.Pid)

	// (a) Throughput.
	b.ResetTimer()
	start := time.Now()
	f.Do("POST", "/api/campaigns/"+id+"/start", nil, f.Admin.Auth()).Expect(b, 200)
	for {
		var open int64
		f.DB.Raw(`SELECT count(*) FROM campaign_recipients WHERE campaign_id = ? AND status IN ('pending', 'sending')`, id).Scan(&open)
		if open == 0 {
			break
		}
		if time.Since(start) > 30*time.Minute {
			b.Fatalf("%d recipients still open", open)
		}
		time.Sleep(200 * time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu1, rss := procStats(w.Cmd.Process.Pid)
	b.StopTimer()
	sent := f.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})
	b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric((cpu1-cpu0).Seconds()/elapsed.Seconds(), "worker-cores")
	b.ReportMetric(float64(rss)/(1<<20), "worker-peak-MiB")
	if sent != n {
		b.Fatalf("the provider received %d sends for %d recipients", sent, n)
	}

	// (c) Status-webhook-to-counter lag: post "delivered" for every message
	// (32 concurrent senders), note when each webhook was acknowledged, and
	// watch delivered_count catch up.
	msgs := f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()})
	acked := make([]time.Time, 0, len(msgs))
	var mu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	type sample struct {
		at    time.Time
		count int
	}
	var samples []sample
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				samples = append(samples, sample{time.Now(), counter(f, id, "delivered_count")})
			}
		}
	}()
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(msgs); i = int(next.Add(1) - 1) {
				if code, err := f.Sim.PostStatus(context.Background(), msgs[i].ID, "delivered", 0); err != nil || code != 200 {
					b.Errorf("status webhook: %d %v", code, err)
					return
				}
				mu.Lock()
				acked = append(acked, time.Now())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for counter(f, id, "delivered_count") < n {
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	<-sampled // the sampler owns samples until it has returned
	samples = append(samples, sample{time.Now(), n})
	slices.SortFunc(acked, func(a, b time.Time) int { return a.Compare(b) })
	// The k-th acknowledged status is counted at the first sample whose
	// count reaches k; its lag is the difference.
	var lags []time.Duration
	j := 0
	for k, at := range acked {
		for j < len(samples)-1 && samples[j].count < k+1 {
			j++
		}
		lags = append(lags, samples[j].at.Sub(at))
	}
	slices.Sort(lags)
	b.ReportMetric(lags[len(lags)/2].Seconds(), "lag-p50-s")
	b.ReportMetric(lags[len(lags)*99/100].Seconds(), "lag-p99-s")
	b.ReportMetric(lags[len(lags)-1].Seconds(), "lag-max-s")
	b.ReportMetric(float64(n)/acked[len(acked)-1].Sub(acked[0]).Seconds(), "statuses/s")
}

// BenchmarkCampaignPacing runs a campaign per tier and measures the rate the
// provider saw over 10 s, after a 2 s warm-up, with two worker processes.
func BenchmarkCampaignPacing(b *testing.B) {
	for _, tier := range []struct {
		name string
		rate int
	}{{"TIER_1K", 10}, {"TIER_10K", 30}, {"TIER_100K", 80}} {
		b.Run(tier.name, func(b *testing.B) {
			f, templateID := campaignFixture(b, tier.name, nil, func(c *platformsim.Config) { c.ThroughputPerSecond = 1000 })
			f.StartWorkerProcess(nil)
			f.StartWorkerProcess(nil)
			id := createCampaign(b, f, templateID, tier.rate*20)
			time.Sleep(2 * time.Second)
			f.Do("POST", "/api/campaigns/"+id+"/start", nil, f.Admin.Auth()).Expect(b, 200)
			time.Sleep(2 * time.Second)
			from := time.Now()
			time.Sleep(10 * time.Second)
			to := time.Now()
			got := 0
			for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
				if !m.SentAt.Before(from) && m.SentAt.Before(to) {
					got++
				}
			}
			f.Do("POST", "/api/campaigns/"+id+"/cancel", nil, f.Admin.Auth()).Expect(b, 200)
			rate := float64(got) / to.Sub(from).Seconds()
			b.ReportMetric(rate, "msgs/s")
			b.ReportMetric(100*(rate-float64(tier.rate))/float64(tier.rate), "error-%")
		})
	}
}
