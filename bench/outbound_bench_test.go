package bench_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"wharf/platformsim"
)

// BenchmarkSharedTierBudget: one TIER_1K account (10 msg/s of ours), a
// campaign of 600 recipients running on it, an API-key client posting 50
// template sends a second to it for BENCH_SHARED_SECONDS (default 20), and an
// agent replying to a customer every 500 ms meanwhile, with one worker
// process beside the api. The provider caps the phone number at 20 sends in
// any rolling second (the tier plus one second's burst) and answers 130429
// above it.
//
// Reported: the agent's reply latency (POST /api/contacts/{id}/messages,
// which sends before it answers), the provider's 130429 answers (0: every
// kind of send drew from the one budget), the most sends the provider saw
// in any 1 s and any 10 s window against the tier, and how many of the
// campaign's and the API's sends left during the window (the API's go
// first: they outrank campaigns).
func BenchmarkSharedTierBudget(b *testing.B) {
	const rate = 10
	seconds := envInt("BENCH_SHARED_SECONDS", 20)
	s := newSystem(b, nil, func(c *platformsim.Config) { c.ThroughputPerSecond = 2 * rate }, 1)
	s.Do("PUT", "/api/accounts/"+s.AccountID, map[string]any{"messaging_tier": "TIER_1K"}, s.Admin.Auth()).Expect(b, 200)
	tmpl := s.SeedTemplate(s.OrgID, s.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	var key struct{ Key string }
	s.Do("POST", "/api/api-keys", map[string]any{"name": "bench"}, s.Admin.Auth()).Expect(b, 201).Into(b, &key)
	var contact struct{ ID string }
	s.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15559990000", "name": "Ann"}, s.Admin.Auth()).Expect(b, 201).Into(b, &contact)
	// The customer wrote a minute ago: the agent's replies are inside the
	// 24-hour window.
	if err := s.DB.Exec(`UPDATE contacts SET last_inbound_at = now() - interval '1 minute' WHERE id = ?`, contact.ID).Error; err != nil {
		b.Fatal(err)
	}
	campaign := s.campaign(s.AccountID, tmpl.ID.String(), 600)

	b.ResetTimer()
	s.start(campaign)
	from := time.Now()
	stop := from.Add(time.Duration(seconds) * time.Second)
	var wg sync.WaitGroup
	apiURL, replyURL := s.base+"/api/messages/template", s.base+"/api/contacts/"+contact.ID+"/messages"
	apiHeaders := map[string]string{"X-API-Key": key.Key}
	// 50 API sends a second, one every 20 ms, each from its own goroutine
	// so that a slow answer does not slow the offered rate.
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; time.Now().Before(stop); i++ {
			<-tick.C
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, _ := json.Marshal(map[string]any{"phone_number": fmt.Sprintf("+1557%07d", i), "template_name": "order_update",
					"template_params": map[string]string{"1": "Jo", "2": fmt.Sprint(i)}})
				code, resp, err := call("POST", apiURL, apiHeaders, body)
				if err := expect(code, resp, err, 202); err != nil {
					b.Error(err)
				}
			}()
		}
	}()
	var replies latencies
	authHeaders := map[string]string{"Authorization": "Bearer " + s.Admin.AccessToken}
	for i := 0; time.Now().Before(stop); i++ {
		body, _ := json.Marshal(map[string]any{"type": "text", "text": fmt.Sprintf("reply %d", i)})
		t0 := time.Now()
		code, resp, err := call("POST", replyURL, authHeaders, body)
		if err := expect(code, resp, err, 201); err != nil {
			b.Fatal(err)
		}
		replies.add(time.Since(t0))
		time.Sleep(500 * time.Millisecond)
	}
	wg.Wait()
	to := time.Now()
	b.StopTimer()
	s.Do("POST", "/api/campaigns/"+campaign+"/cancel", nil, s.Admin.Auth()).Expect(b, 200)

	replies.report(b, to.Sub(from), "reply")
	throttled := 0
	var at []time.Time
	for _, r := range s.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: s.PhoneNumberID() + "/messages"}) {
		if r.ErrorCode == 130429 {
			throttled++
		}
		if r.Status == 200 && !r.At.Before(from) && r.At.Before(to) {
			at = append(at, r.At)
		}
	}
	slices.SortFunc(at, time.Time.Compare)
	b.ReportMetric(float64(throttled), "provider-130429")
	b.ReportMetric(float64(maxInWindow(at, time.Second)), "max-sends-1s")
	b.ReportMetric(100*float64(maxInWindow(at, 10*time.Second))/(10*rate), "max-10s-%-of-tier")
	b.ReportMetric(float64(len(at))/to.Sub(from).Seconds(), "sends/s")
	var campaignSent int
	s.DB.Raw(`SELECT count(*) FROM campaign_recipients WHERE campaign_id = ? AND status <> 'pending'`, campaign).Scan(&campaignSent)
	b.ReportMetric(float64(campaignSent), "campaign-sends")
}

// maxInWindow is the most times of sorted at that fall in any window of
// length w (starting at one of them).
func maxInWindow(at []time.Time, w time.Duration) int {
	most, j := 0, 0
	for i := range at {
		for j < len(at) && at[j].Sub(at[i]) < w {
			j++
		}
		most = max(most, j-i)
	}
	return most
}
