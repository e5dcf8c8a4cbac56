package bench_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// BenchmarkChatbotSlowAITenant: two organizations on one worker process
// (the defaults: WORKER_CONCURRENCY 10, AI_TIMEOUT 20 s). B's model server
// answers at once; A's hangs (every call ends at AI_TIMEOUT with the
// fallback). B's contacts write BENCH_FAIRSHARE_RATE (10) messages a second
// for BENCH_FAIRSHARE_SECONDS (20), first alone, then while A's contacts
// write as many into the hanging server. A reply's latency runs from the
// webhook's POST until the simulator accepted the reply (a reply not in
// within two minutes of the last message counts as that: phaseN-answered-
// share says how many came). The figures
// compare B's latency alone and beside A; BENCH_CHATBOT_ORG_CONCURRENCY sets
// CHATBOT_ORG_CONCURRENCY (10, every slot, is as good as no share at all).
func BenchmarkChatbotSlowAITenant(b *testing.B) {
	rate := envInt("BENCH_FAIRSHARE_RATE", 10)
	seconds := envInt("BENCH_FAIRSHARE_SECONDS", 20)
	env := map[string]string{}
	if v := os.Getenv("BENCH_CHATBOT_ORG_CONCURRENCY"); v != "" {
		env["CHATBOT_ORG_CONCURRENCY"] = v
	}
	s := newSystem(b, env, nil, 1)
	s.Sim.SetWebhookURL(s.base + "/api/webhook")
	slow, fast := apptest.NewFakeLLM(b), apptest.NewFakeLLM(b)
	release := slow.Hold()
	defer release()
	fast.SetReply("fast reply")
	s.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_model": "m",
		"ai_base_url": slow.OpenAIBaseURL(), "fallback_message": "Fallback."}, s.Admin.Auth()).Expect(b, 200)

	// Organization B, with a number of its own.
	var org struct{ ID string }
	s.Do("POST", "/api/organizations", map[string]string{"name": "Fast Co"}, s.Admin.Auth()).Expect(b, 201).Into(b, &org)
	var inB apptest.Session
	s.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, s.Admin.Auth()).Expect(b, 200).Into(b, &inB)
	adminB := s.CreateUser(inB.Auth(), "bench-fast@example.test", "Admin").Auth()
	waba := s.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Fast Co", AccessToken: "token-bench-fast",
		PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-030-0001", VerifiedName: "Fast Co"}}})
	phoneB := waba.PhoneNumbers[0].ID
	var acct struct{ ID string }
	s.Do("POST", "/api/accounts", map[string]any{"name": "Fast", "phone_number_id": phoneB, "business_account_id": waba.ID,
		"access_token": waba.AccessToken}, adminB).Expect(b, 201).Into(b, &acct)
	s.Do("POST", "/api/accounts/"+acct.ID+"/test", nil, adminB).Expect(b, 200)
	s.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true, "ai_enabled": true, "ai_model": "m",
		"ai_base_url": fast.OpenAIBaseURL()}, adminB).Expect(b, 200)

	n := rate * seconds
	// phase sends B's n messages (and as many of A's when withA), each from
	// a contact of its own, and answers B's reply latencies.
	phase := func(p int, withA bool) []time.Duration {
		posted := make([]time.Time, n)
		var wg sync.WaitGroup
		tick := time.NewTicker(time.Second / time.Duration(rate))
		for i := range n {
			<-tick.C
			wg.Add(1)
			go func() {
				defer wg.Done()
				posted[i] = time.Now()
				in := platformsim.Incoming{PhoneNumberID: phoneB, From: fmt.Sprintf("1557%d%06d", p, i), Type: "text", Text: "hi"}
				if _, status, err := s.Sim.Incoming(context.Background(), in); err != nil || status != 200 {
					b.Errorf("B's webhook: %d, %v", status, err)
				}
			}()
			if withA {
				wg.Add(1)
				go func() {
					defer wg.Done()
					in := platformsim.Incoming{PhoneNumberID: s.PhoneNumberID(), From: fmt.Sprintf("1558%d%06d", p, i), Type: "text", Text: "hi"}
					if _, status, err := s.Sim.Incoming(context.Background(), in); err != nil || status != 200 {
						b.Errorf("A's webhook: %d, %v", status, err)
					}
				}()
			}
		}
		tick.Stop()
		wg.Wait()
		// Replies not in within two minutes of the last message count as
		// two minutes (and the answered share tells how many).
		deadline := time.Now().Add(2 * time.Minute)
		var lat []time.Duration
		for {
			lat = lat[:0]
			replied := map[string]time.Time{}
			for _, m := range s.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: phoneB}) {
				replied[m.To] = m.SentAt
			}
			all := true
			for i := range n {
				at, ok := replied[fmt.Sprintf("1557%d%06d", p, i)]
				if !ok {
					all, at = false, deadline
				}
				lat = append(lat, at.Sub(posted[i]))
			}
			if all || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		answered := 0
		for _, d := range lat {
			if d < 2*time.Minute {
				answered++
			}
		}
		b.ReportMetric(float64(answered)/float64(n), fmt.Sprintf("phase%d-answered-share", p))
		slices.Sort(lat)
		return lat
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

	b.ResetTimer()
	alone := phase(1, false)
	beside := phase(2, true)
	b.StopTimer()
	b.ReportMetric(ms(alone[len(alone)/2]), "alone-p50-ms")
	b.ReportMetric(ms(alone[len(alone)*99/100]), "alone-p99-ms")
	b.ReportMetric(ms(beside[len(beside)/2]), "beside-p50-ms")
	b.ReportMetric(ms(beside[len(beside)*99/100]), "beside-p99-ms")
	b.ReportMetric(ms(beside[len(beside)-1]), "beside-max-ms")
	b.ReportMetric(float64(slow.MaxInFlight()), "slow-server-max-in-flight")
}
