package e2e_test

import (
	"fmt"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/infra/metrics/metricstest"
)

// One provider webhook with two contacts' messages and a status is stored
// by the api as three events (two of type messages, one of statuses), and
// the worker counts each applied with its lag.
func TestInboundMetricsCountStoredAndApplied(t *testing.T) {
	f := newFixture(t, map[string]string{"METRICS_ADDR": "127.0.0.1:0", "HEALTH_ADDR": "127.0.0.1:0"}, nil)
	w := f.StartWorker()
	body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"1","phone_number_id":%q},
		"statuses":[{"id":"wamid.nobody","status":"delivered","timestamp":"1700000000","recipient_id":"15550005555"}],
		"contacts":[{"profile":{"name":"Cy"},"wa_id":"15550005555"},{"profile":{"name":"Di"},"wa_id":"15550006666"}],
		"messages":[{"from":"15550005555","id":"wamid.cy","timestamp":"1700000001","type":"text","text":{"body":"one"}},
		            {"from":"15550006666","id":"wamid.di","timestamp":"1700000001","type":"text","text":{"body":"two"}}]}}]}]}`,
		f.PhoneNumberID()))
	if code := signedPost(t, f.Server.URL, f.AppSecret, body); code != 200 {
		t.Fatal(code)
	}
	api := metricstest.Scrape(t, "http://"+f.API.MetricsAddr+"/metrics")
	stored := func(typ string) float64 {
		return api.Value("wharf_inbound_events_stored_total", map[string]string{"event_type": typ})
	}
	if stored("messages") != 2 || stored("statuses") != 1 {
		t.Fatalf("stored: messages %v, statuses %v", stored("messages"), stored("statuses"))
	}
	var m metricstest.Families
	applied := func(typ string) float64 {
		return m.Value("wharf_inbound_events_applied_total", map[string]string{"event_type": typ})
	}
	apptest.Eventually(t, 10*time.Second, "three events applied", func() bool {
		m = metricstest.Scrape(t, "http://"+w.HealthAddr+"/metrics")
		return applied("messages") == 2 && applied("statuses") == 1
	})
	for _, typ := range []string{"messages", "statuses"} {
		if lag := m.Value("wharf_inbound_event_lag_seconds", map[string]string{"event_type": typ}); lag != applied(typ) {
			t.Errorf("%s: %v lags observed for %v applied", typ, lag, applied(typ))
		}
	}
	if m.Has("wharf_inbound_events_stored_total") || api.Has("wharf_inbound_events_applied_total") {
		t.Fatal("the worker counts stored events or the api applied ones")
	}
}

// Outbound webhook attempts are counted by outcome: an endpoint that fails
// once is a retry then a success; one that keeps failing is two retries
// and a drop.
func TestWebhookDeliveryMetricsByOutcome(t *testing.T) {
	f := newFixture(t, map[string]string{"HEALTH_ADDR": "127.0.0.1:0"}, nil)
	w := f.StartWorker()
	flaky, dead := apptest.NewReceiver(t), apptest.NewReceiver(t)
	flaky.FailNext(500)
	dead.FailNext(500, 500, 500)
	for name, r := range map[string]*apptest.Receiver{"flaky": flaky, "dead": dead} {
		f.Do("POST", "/api/webhooks", map[string]any{"name": name, "url": r.URL, "events": []string{"contact.created"}}, f.admin.Auth()).Expect(t, 201)
	}
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550150000"}, f.admin.Auth()).Expect(t, 201)
	url := "http://" + w.HealthAddr + "/metrics"
	want := map[string]float64{"success": 1, "retry": 3, "dropped": 1}
	got := map[string]float64{}
	apptest.Eventually(t, 20*time.Second, "every attempt counted", func() bool {
		m := metricstest.Scrape(t, url)
		for o := range want {
			got[o] = m.Value("wharf_webhook_deliveries_total", map[string]string{"outcome": o})
		}
		return got["dropped"] == 1 && got["success"] == 1
	})
	m := metricstest.Scrape(t, url)
	for o, n := range want {
		if got := m.Value("wharf_webhook_deliveries_total", map[string]string{"outcome": o}); got != n {
			t.Errorf("%s deliveries %v, want %v", o, got, n)
		}
		if got := m.Value("wharf_webhook_delivery_duration_seconds", map[string]string{"outcome": o}); got != n {
			t.Errorf("%s delivery durations %v, want %v", o, got, n)
		}
	}
}
