package bench_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"wharf/platform"
	"wharf/platformsim"
)

// BenchmarkChatbotReplies: incoming messages at BENCH_CHATBOT_RATE (200) a
// second for BENCH_CHATBOT_SECONDS (10), spread over 1,000 contacts, each
// answered by a keyword rule, with the api and one worker process. The
// latency of a reply is from the POST of the webhook that carried the
// message until the provider accepted the reply; every contact's replies
// must come in the order of its messages (their texts alternate).
func BenchmarkChatbotReplies(b *testing.B) {
	rate := envInt("BENCH_CHATBOT_RATE", 200)
	seconds := envInt("BENCH_CHATBOT_SECONDS", 10)
	const contacts = 1000
	n := rate * seconds
	s := newSystem(b, nil, nil, 1)
	a := s.Admin.Auth()
	s.Do("PUT", "/api/chatbot/settings", map[string]any{"chatbot_enabled": true}, a).Expect(b, 200)
	for _, k := range []string{"a", "b"} {
		s.Do("POST", "/api/chatbot/keywords", map[string]any{"name": k, "keywords": []string{k}, "match_type": "exact",
			"response": "reply " + k}, a).Expect(b, 201)
	}
	// Message i goes to contact i % 1000; a contact's k-th message says
	// "a" when k is even, else "b".
	bodies := make([][]byte, n)
	for i := range bodies {
		text := "a"
		if (i/contacts)%2 == 1 {
			text = "b"
		}
		bodies[i] = []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"messages","value":{
"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100001","phone_number_id":%q},
"contacts":[{"profile":{"name":"Bench"},"wa_id":"1559%07d"}],
"messages":[{"from":"1559%07d","id":"wamid.bot%d","timestamp":"%d","type":"text","text":{"body":%q}}]}}]}]}`,
			s.WABA.ID, s.PhoneNumberID(), i%contacts, i%contacts, i, time.Now().Unix(), text))
	}
	url := s.base + "/api/webhook"
	posted := make([]time.Time, n)
	cpu0 := s.cpu()
	b.ResetTimer()
	s.profile()
	start := time.Now()
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range n {
		<-tick.C
		wg.Add(1)
		go func() {
			defer wg.Done()
			posted[i] = time.Now()
			code, resp, err := call("POST", url, map[string]string{platform.SignatureHeader: platform.Sign(s.AppSecret, bodies[i])}, bodies[i])
			if err := expect(code, resp, err, 200); err != nil {
				b.Error(err)
			}
		}()
	}
	tick.Stop()
	wg.Wait()
	waitFor(b, 10*time.Minute, "every reply at the provider", func() bool { return s.Sim.MessageCount(platformsim.MessageFilter{}) >= n })
	b.StopTimer()
	c := s.cpu().sub(cpu0)

	// Match each contact's replies, in send order, to its messages.
	byContact := map[string][]platformsim.Message{}
	for _, m := range s.Sim.Messages(platformsim.MessageFilter{}) {
		byContact[m.To] = append(byContact[m.To], m)
	}
	var lat []time.Duration
	var last time.Time
	for ct := range contacts {
		to := fmt.Sprintf("1559%07d", ct)
		replies := byContact[to]
		for k, m := range replies {
			var body struct {
				Text struct{ Body string } `json:"text"`
			}
			_ = json.Unmarshal(m.Body, &body)
			want := "reply a"
			if k%2 == 1 {
				want = "reply b"
			}
			if body.Text.Body != want {
				b.Fatalf("contact %s reply %d is %q, want %q: replies out of order", to, k, body.Text.Body, want)
			}
			i := ct + k*contacts
			if i < n {
				lat = append(lat, m.SentAt.Sub(posted[i]))
			}
			if m.SentAt.After(last) {
				last = m.SentAt
			}
		}
	}
	if len(lat) != n {
		b.Fatalf("%d replies for %d messages", len(lat), n)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "reply-p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "reply-p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "reply-max-ms")
	b.ReportMetric(float64(n)/last.Sub(start).Seconds(), "replies/s")
	c.report(b, n, "msg")
}
