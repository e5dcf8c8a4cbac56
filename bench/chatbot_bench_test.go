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
// second for BENCH_CHATBOT_SECONDS (10), spread over 1,000 contacts, with
// the api and one worker process. Four contacts in five write "a" and "b"
// in turn, each answered by a keyword rule; every fifth contact walks a
// conversation flow (trigger "flow", two questions, a completion message
// with the answers: one reply per message, from a session it starts,
// continues and ends). The latency of a reply is from the POST of the
// webhook that carried the message until the provider accepted the reply;
// every contact's replies must come in the order of its messages.
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
	s.Do("POST", "/api/chatbot/flows", map[string]any{"name": "order", "trigger_keywords": []string{"flow"},
		"completion_message": "Done: {{size}} {{colour}}", "steps": []map[string]any{
			{"step_name": "size", "step_order": 1, "message_type": "text", "message": "What size?", "input_type": "text", "store_as": "size"},
			{"step_name": "colour", "step_order": 2, "message_type": "text", "message": "Got {{size}}. Colour?", "input_type": "text",
				"store_as": "colour"}}}, a).Expect(b, 201)
	// Message i goes to contact i % 1000 and is its k-th, k = i / 1000.
	bodies := make([][]byte, n)
	for i := range bodies {
		text, _ := chatbotTurn(i%contacts, i/contacts)
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
			_, want := chatbotTurn(ct, k)
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

// chatbotTurn is what contact ct writes in its k-th message and the reply
// it must get: a keyword ("a", "b" in turn), or, for every fifth contact, a
// walk through the flow (started, two answers, completed; again).
func chatbotTurn(ct, k int) (text, reply string) {
	if ct%5 == 0 {
		switch k % 3 {
		case 0:
			return "flow", "What size?"
		case 1:
			return "s", "Got s. Colour?"
		default:
			return "c", "Done: s c"
		}
	}
	if k%2 == 1 {
		return "b", "reply b"
	}
	return "a", "reply a"
}
