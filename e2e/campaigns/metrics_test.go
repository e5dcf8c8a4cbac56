package campaigns_test

import (
	"context"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
	"wharf/internal/infra/metrics/metricstest"
	"wharf/jobs"
	"wharf/platformsim"
)

// workerMetrics scrapes the in-process worker's /metrics (HEALTH_ADDR).
func workerMetrics(t *testing.T, addr string) metricstest.Families {
	t.Helper()
	return metricstest.Scrape(t, "http://"+addr+"/metrics")
}

func sendsBy(f metricstest.Families, outcome string) float64 {
	return f.Value("wharf_campaign_sends_total", map[string]string{"outcome": outcome})
}

// After a short paced campaign the worker's send counter equals the sends
// the provider received, a recipient that could not be built counts as
// failed without a send, the pace's waits are counted as waits (of the
// lanes' jobs too, never as failures), and a recipient the sweep finds left
// sending by a dead worker counts as unknown.
func TestCampaignSendMetricsMatchTheProvider(t *testing.T) {
	f := newFixture(t, "TIER_1K", map[string]string{"HEALTH_ADDR": "127.0.0.1:0"}, noCap)
	w := f.StartWorker()
	c := f.campaign(30, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/recipients/import", map[string]any{"recipients": []map[string]any{
		{"phone_number": "+15557999999", "name": "No order"}}}, f.Admin.Auth()).Expect(t, 200)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	f.waitStatus(c.ID, "completed", 30*time.Second)

	m := workerMetrics(t, w.HealthAddr)
	if len(f.sends()) != 30 || f.requests() != 30 || sendsBy(m, "sent") != 30 {
		t.Fatalf("provider accepted %d in %d requests; metrics count %v sent", len(f.sends()), f.requests(), sendsBy(m, "sent"))
	}
	if sendsBy(m, "failed") != 1 || sendsBy(m, "released") != 0 || sendsBy(m, "unknown") != 0 {
		t.Fatalf("sends by outcome: failed %v released %v unknown %v", sendsBy(m, "failed"), sendsBy(m, "released"), sendsBy(m, "unknown"))
	}
	// 31 recipients at 10 per second with a 20-message burst: the lanes
	// waited for the pace at least once.
	pace := map[string]string{"reason": "pace"}
	if m.Value("wharf_campaign_waits_total", pace) < 1 || m.Value("wharf_campaign_wait_seconds_total", pace) <= 0 {
		t.Fatalf("no pace wait counted:\n%s", m.Text)
	}
	lane := func(outcome string) float64 {
		return m.Value("wharf_jobs_processed_total", map[string]string{"task_type": jobs.TypeCampaignLane, "outcome": outcome})
	}
	if lane("wait") < 1 || lane("success") < 1 || lane("retry")+lane("failure") != 0 {
		t.Fatalf("campaign lane runs: wait %v success %v retry %v failure %v", lane("wait"), lane("success"), lane("retry"), lane("failure"))
	}

	// A recipient as a crashed worker leaves it: claimed long ago
	// (CAMPAIGN_SENDING_TIMEOUT is 2 minutes), never answered.
	f.DB.Exec(`INSERT INTO campaign_recipients (campaign_id, organization_id, phone_number, name, status, send_started_at, attempts)
		VALUES (?, ?, '+15559990001', 'Crash', 'sending', now() - interval '10 minutes', 1)`, c.ID, f.OrgID)
	opts := f.Redis.Options()
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB, Password: opts.Password})
	defer client.Close()
	if _, err := jobs.NewEnqueuer(client, nil).Enqueue(context.Background(), jobs.CampaignSweep{Tick: time.Now()}); err != nil {
		t.Fatal(err)
	}
	apptest.Eventually(t, 10*time.Second, "the swept recipient counted unknown", func() bool {
		return sendsBy(workerMetrics(t, w.HealthAddr), "unknown") == 1
	})
}

// Throttled sends and sends that met provider trouble are released (back
// to pending, sent later), one count per such answer, and the lanes' waits
// for the provider's throttle are counted by their reason.
func TestCampaignMetricsCountReleasesAndProviderWaits(t *testing.T) {
	f := newFixture(t, "TIER_UNLIMITED", map[string]string{"HEALTH_ADDR": "127.0.0.1:0"},
		func(c *platformsim.Config) { c.ThroughputPerSecond = 3; c.ErrorRate = 0.25 })
	w := f.StartWorker()
	c := f.campaign(12, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	if got := f.waitStatus(c.ID, "completed", 90*time.Second); got.FailedCount != 0 {
		t.Fatalf("failed recipients %+v", got)
	}
	var throttles, failures int
	for _, r := range f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: f.PhoneNumberID() + "/messages"}) {
		switch r.ErrorCode {
		case 130429:
			throttles++
		case 131000:
			failures++
		}
	}
	if throttles == 0 {
		t.Fatal("no throttle: the test proves nothing")
	}
	m := workerMetrics(t, w.HealthAddr)
	if sendsBy(m, "sent") != 12 || sendsBy(m, "released") != float64(throttles+failures) {
		t.Fatalf("sent %v, released %v; provider throttled %d and failed %d", sendsBy(m, "sent"), sendsBy(m, "released"), throttles, failures)
	}
	if m.Value("wharf_campaign_waits_total", map[string]string{"reason": "provider_throttle"}) < 1 {
		t.Fatalf("no throttle wait counted:\n%s", m.Text)
	}
}
