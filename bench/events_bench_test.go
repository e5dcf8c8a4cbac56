package bench_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/identity"
	"wharf/internal/infra/live"
	"wharf/models"
	"wharf/platform"
)

// BenchmarkEventStreamInbound: BENCH_STREAMS (2,000) event streams open on
// the api process (GET /api/events, agents of one organization, 5 streams
// per agent, the per-user limit), then BENCH_MESSAGES (50) customer
// messages posted as signed provider webhooks, one every 100 ms, while one
// worker stores them. Latency is from the webhook's answer to the message
// on each stream (one sample per message and stream): p50/p99 over all of
// them, the target being p99 < 300 ms with 2,000 streams. Also: the time to
// open the streams, and the api's CPU per delivered event.
func BenchmarkEventStreamInbound(b *testing.B) {
	streams := envInt("BENCH_STREAMS", 2000)
	messages := envInt("BENCH_MESSAGES", 50)
	s := newSystem(b, map[string]string{"EVENT_STREAMS_MAX": fmt.Sprint(streams + 100)}, nil, 1)
	tokens := s.agentTokens(b, (streams+live.PerUser-1)/live.PerUser)

	// answered[i] is when message i's webhook was answered; got[k] receives
	// (message, arrival) pairs of stream k.
	answered := make([]atomic.Int64, messages)
	type arrival struct {
		msg int
		at  time.Time
	}
	arrivals := make(chan arrival, streams*messages)
	var connected sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, MaxConnsPerHost: 0}}
	openStart := time.Now()
	for k := range streams {
		connected.Add(1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/api/events", nil)
			req.Header.Set("Authorization", "Bearer "+tokens[k/live.PerUser])
			res, err := client.Do(req)
			if err != nil || res.StatusCode != 200 {
				connected.Done()
				if ctx.Err() == nil {
					b.Errorf("stream %d: %v %v", k, err, res)
				}
				return
			}
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			first := true
			for sc.Scan() {
				line := sc.Text()
				if first && line == ": connected" {
					first = false
					connected.Done()
					continue
				}
				// Cheap matching: the load generator must not be the
				// bottleneck of 2,000 streams.
				if i := strings.Index(line, `"text":"bench `); i >= 0 && strings.HasPrefix(line, "data: ") {
					var n int
					if _, err := fmt.Sscanf(line[i+len(`"text":"bench `):], "%d", &n); err == nil {
						arrivals <- arrival{n, time.Now()}
					}
				}
			}
		}()
	}
	connected.Wait()
	if b.Failed() {
		return
	}
	opened := time.Since(openStart) // reported at the end: ResetTimer drops metrics

	url := s.base + "/api/webhook"
	cpu0 := s.cpu()
	b.ResetTimer()
	start := time.Now()
	for i := range messages {
		body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"messages","value":{
"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100001","phone_number_id":%q},
"contacts":[{"profile":{"name":"Bench %d"},"wa_id":"1557%07d"}],
"messages":[{"from":"1557%07d","id":"wamid.live%d-%s","timestamp":"%d","type":"text","text":{"body":"bench %d"}}]}}]}]}`,
			s.WABA.ID, s.PhoneNumberID(), i, i, i, i, uuid.NewString()[:8], time.Now().Unix(), i))
		code, resp, err := call("POST", url, map[string]string{platform.SignatureHeader: platform.Sign(s.AppSecret, body)}, body)
		answered[i].Store(time.Now().UnixNano())
		if err := expect(code, resp, err, 200); err != nil {
			b.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var lat latencies
	want := streams * messages
	deadline := time.After(time.Minute)
	for got := 0; got < want; got++ {
		select {
		case a := <-arrivals:
			lat.add(time.Duration(a.at.UnixNano() - answered[a.msg].Load()))
		case <-deadline:
			b.Fatalf("%d of %d deliveries after a minute", got, want)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	lat.report(b, elapsed, "deliveries")
	b.ReportMetric(float64(opened.Milliseconds()), "open-ms")
	s.cpu().sub(cpu0).report(b, want, "delivery")
}

// agentTokens creates n agents of the system's organization (straight into
// the database: password hashing would take longer than the benchmark)
// and answers an access token for each, signed as the api signs them.
func (s *system) agentTokens(b *testing.B, n int) []string {
	b.Helper()
	org := uuid.MustParse(s.OrgID)
	var role models.Role
	if err := s.DB.Take(&role, "organization_id = ? AND name = ?", org, identity.RoleAgent).Error; err != nil {
		b.Fatal(err)
	}
	hash, err := identity.HashPassword("bench-password-123")
	if err != nil {
		b.Fatal(err)
	}
	users := make([]models.User, n)
	members := make([]models.OrganizationMember, n)
	for i := range users {
		users[i] = models.User{ID: uuid.New(), OrganizationID: org, Email: fmt.Sprintf("bench-agent-%d@wharf.test", i),
			PasswordHash: hash, FullName: fmt.Sprintf("Agent %d", i), IsActive: true, IsAvailable: true}
		members[i] = models.OrganizationMember{ID: uuid.New(), OrganizationID: org, UserID: users[i].ID, RoleID: role.ID, IsDefault: true}
	}
	if err := s.DB.CreateInBatches(users, 500).Error; err != nil {
		b.Fatal(err)
	}
	if err := s.DB.CreateInBatches(members, 500).Error; err != nil {
		b.Fatal(err)
	}
	signer := identity.NewTokens(s.Cfg.JWTSecret, time.Hour, 2*time.Hour)
	tokens := make([]string, n)
	for i, u := range users {
		t, err := signer.SignAccess(&identity.Principal{UserID: u.ID, OrgID: org, RoleID: role.ID, RoleName: role.Name})
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = t
	}
	return tokens
}
