package e2e_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/webhooks"
	"wharf/models"
	"wharf/platformsim"
)

type webhookOut struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	URL       string            `json:"url"`
	Events    []string          `json:"events"`
	Headers   map[string]string `json:"headers"`
	HasSecret bool              `json:"has_secret"`
	IsActive  bool              `json:"is_active"`
}

func TestWebhookCRUDAndValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"OUTBOUND_ALLOW_PRIVATE": "false"}, nil)
	a := f.admin.Auth()
	var list struct {
		Items           []webhookOut         `json:"items"`
		AvailableEvents []webhooks.EventInfo `json:"available_events"`
	}
	f.Do("GET", "/api/webhooks", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Items) != 0 || len(list.AvailableEvents) != 9 {
		t.Fatalf("list %+v", list)
	}
	base := map[string]any{"name": "Hook", "url": "https://hooks.example.com/x", "events": []string{"message.incoming"}}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range base {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	for _, bad := range []map[string]any{
		with("url", "ftp://hooks.example.com"),
		with("url", "http://localhost:9000/x"),
		with("url", "http://127.0.0.1/x"),
		with("url", "http://10.0.0.8/x"),
		with("url", "http://192.168.0.2/x"),
		with("url", "http://169.254.169.254/latest"),
		with("url", "http://[::1]/x"),
		with("url", "http://0.0.0.0/x"),
		with("url", "http://crm.local/x"),
		with("url", "http://vault.internal/x"),
		with("events", []string{}),
		with("events", []string{"message.deleted"}),
		with("name", ""),
		with("headers", map[string]string{"Bad Header": "x"}),
		with("headers", map[string]string{"User-Agent": "mine"}),
		with("headers", map[string]string{"X-Ok": "a\r\nInjected: 1"}),
	} {
		if r := f.Do("POST", "/api/webhooks", bad, a); r.Status != 400 {
			t.Errorf("%v: %d %s", bad, r.Status, r.Body)
		}
	}
	var w webhookOut
	f.Do("POST", "/api/webhooks", with("secret", "s3cret"), a).Expect(t, 201).Into(t, &w)
	if !w.HasSecret || !w.IsActive || w.Name != "Hook" {
		t.Fatalf("created %+v", w)
	}
	r := f.Do("GET", "/api/webhooks/"+w.ID, nil, a).Expect(t, 200)
	if strings.Contains(string(r.Body), "s3cret") || strings.Contains(string(r.Body), `"secret"`) {
		t.Fatalf("secret returned: %s", r.Body)
	}
	var row models.Webhook
	f.DB.Take(&row, "id = ?", w.ID)
	if len(row.SecretEnc) == 0 || bytes.Contains(row.SecretEnc, []byte("s3cret")) {
		t.Fatal("secret not encrypted")
	}
	f.Do("PUT", "/api/webhooks/"+w.ID, map[string]any{"is_active": false, "secret": "", "events": []string{"contact.created", "message.sent"}}, a).
		Expect(t, 200).Into(t, &w)
	if w.IsActive || w.HasSecret || len(w.Events) != 2 || w.URL != "https://hooks.example.com/x" {
		t.Fatalf("updated %+v", w)
	}
	f.Do("PUT", "/api/webhooks/"+w.ID, map[string]any{"url": "http://127.0.0.1:1/x"}, a).Expect(t, 400)
	f.Do("DELETE", "/api/webhooks/"+w.ID, nil, a).Expect(t, 200)
	f.Do("GET", "/api/webhooks/"+w.ID, nil, a).Expect(t, 404)
}

func TestWebhookTestEndpointIsSynchronousAndLogged(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	rcv := apptest.NewReceiver(t)
	var w webhookOut
	f.Do("POST", "/api/webhooks", map[string]any{"name": "T", "url": rcv.URL, "events": []string{"message.incoming"}, "secret": "k",
		"headers": map[string]string{"Authorization": "Bearer abc"}}, f.admin.Auth()).Expect(t, 201).Into(t, &w)
	var res struct {
		Success    bool   `json:"success"`
		StatusCode int    `json:"status_code"`
		Error      string `json:"error"`
	}
	f.Do("POST", "/api/webhooks/"+w.ID+"/test", nil, f.admin.Auth()).Expect(t, 200).Into(t, &res)
	if !res.Success || res.StatusCode != 200 || len(rcv.Got()) != 1 {
		t.Fatalf("test %+v (%d received)", res, len(rcv.Got()))
	}
	got := rcv.Got()[0]
	var p struct {
		Event string         `json:"event"`
		Data  map[string]any `json:"data"`
	}
	_ = json.Unmarshal(got.Body, &p)
	if p.Event != "test" || got.Header.Get("X-Webhook-Signature") != webhooks.Signature("k", got.Body) ||
		got.Header.Get("Authorization") != "Bearer abc" || got.Header.Get("User-Agent") != "Wharf-Webhook/1.0" {
		t.Fatalf("test delivery %s %v", got.Body, got.Header)
	}
	rcv.FailNext(204) // any 2xx is a success
	f.Do("POST", "/api/webhooks/"+w.ID+"/test", nil, f.admin.Auth()).Expect(t, 200).Into(t, &res)
	if !res.Success || res.StatusCode != 204 {
		t.Fatalf("204: %+v", res)
	}
	rcv.FailNext(503)
	f.Do("POST", "/api/webhooks/"+w.ID+"/test", nil, f.admin.Auth()).Expect(t, 200).Into(t, &res)
	if res.Success || res.StatusCode != 503 || res.Error == "" {
		t.Fatalf("failed test %+v", res)
	}
	var log struct {
		Items []struct {
			Event      string `json:"event"`
			Success    bool   `json:"success"`
			StatusCode int    `json:"status_code"`
			Error      string `json:"error"`
		} `json:"items"`
	}
	f.Do("GET", "/api/webhooks/"+w.ID+"/deliveries", nil, f.admin.Auth()).Expect(t, 200).Into(t, &log)
	if len(log.Items) != 3 || log.Items[0].StatusCode != 503 || log.Items[0].Success || !log.Items[1].Success || log.Items[0].Event != "test" {
		t.Fatalf("delivery log %+v", log)
	}
}

// A failing endpoint is tried 3 times, about 2 s and 4 s apart; an endpoint
// that recovers gets the event; one that does not is given up on.
//
// Not parallel: it measures the gaps between attempts.
func TestWebhookRetriesWithBackoffThenDrops(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.StartWorker()
	flaky, dead := apptest.NewReceiver(t), apptest.NewReceiver(t)
	flaky.FailNext(500, 502)
	dead.FailNext(500, 500, 500, 500, 500)
	for name, r := range map[string]*apptest.Receiver{"flaky": flaky, "dead": dead} {
		f.Do("POST", "/api/webhooks", map[string]any{"name": name, "url": r.URL, "events": []string{"contact.created"}}, f.admin.Auth()).Expect(t, 201)
	}
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550150000"}, f.admin.Auth()).Expect(t, 201)
	apptest.Eventually(t, 20*time.Second, "third attempts", func() bool { return len(flaky.Got()) == 3 && len(dead.Got()) == 3 })
	for name, r := range map[string]*apptest.Receiver{"flaky": flaky, "dead": dead} {
		got := r.Got()
		// Never sooner than the backoff; later only as a busy machine is
		// slow at everything (apptest.WaitSlack times).
		gap1, gap2 := got[1].At.Sub(got[0].At), got[2].At.Sub(got[1].At)
		if gap1 < 1500*time.Millisecond || gap1 > apptest.WaitSlack*2*time.Second || gap2 < 3500*time.Millisecond ||
			gap2 > apptest.WaitSlack*4*time.Second {
			t.Errorf("%s: attempts %s and %s apart, want about 2 s and 4 s", name, gap1, gap2)
		}
		if !bytes.Equal(got[0].Body, got[2].Body) {
			t.Errorf("%s: retries changed the body", name)
		}
	}
	time.Sleep(5 * time.Second)
	if len(dead.Got()) != 3 {
		t.Fatalf("dead endpoint got %d attempts, want 3", len(dead.Got()))
	}
	var deliveries []models.WebhookDelivery
	f.DB.Order("id").Find(&deliveries)
	var ok, failed int
	for _, d := range deliveries {
		if d.Success {
			ok++
		} else {
			failed++
		}
	}
	if ok != 1 || failed != 5 {
		t.Fatalf("delivery log: %d ok, %d failed; want 1 and 5", ok, failed)
	}
}

// At most 10 webhooks are delivered to at once for one event.
//
// Not parallel: it measures concurrent deliveries.
func TestWebhookDispatchConcurrencyIsBounded(t *testing.T) {
	f := newFixture(t, nil, nil)
	f.StartWorker()
	rcv := apptest.NewReceiver(t)
	rcv.Delay = 300 * time.Millisecond
	for i := 0; i < 15; i++ {
		f.Do("POST", "/api/webhooks", map[string]any{"name": "h", "url": rcv.URL + "/" + string(rune('a'+i)), "events": []string{"message.incoming"}},
			f.admin.Auth()).Expect(t, 201)
	}
	f.Incoming(platformsim.Incoming{From: "15550160000", Type: "text", Text: "fan out"})
	apptest.Eventually(t, 15*time.Second, "15 deliveries", func() bool { return len(rcv.Got()) == 15 })
	if m := rcv.MaxSeen.Load(); m > webhooks.MaxConcurrent || m < 5 {
		t.Fatalf("%d deliveries at once, want between 5 and %d", m, webhooks.MaxConcurrent)
	}
}

// Agent sends fire message.sent and message.outgoing; API-key sends only
// message.outgoing.
func TestMessageSentAndOutgoingEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	f.SeedTemplate(f.orgID, f.accountID, "ping", "Ping", false)
	rcv := apptest.NewReceiver(t)
	f.Do("POST", "/api/webhooks", map[string]any{"name": "out", "url": rcv.URL, "events": []string{"message.sent", "message.outgoing"}}, f.admin.Auth()).Expect(t, 201)
	contact := f.contactFromIncoming(t, "15550170000", "Pat", "hi")
	f.Do("POST", "/api/contacts/"+contact+"/messages", map[string]any{"type": "text", "text": "from an agent"}, f.admin.Auth()).Expect(t, 201)
	var key struct{ Key string }
	f.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, f.admin.Auth()).Expect(t, 201).Into(t, &key)
	f.Do("POST", "/api/messages/template", map[string]any{"contact_id": contact, "template_name": "ping"}, apptest.APIKey(key.Key)).Expect(t, 202)
	apptest.Eventually(t, 15*time.Second, "3 events", func() bool { return len(rcv.Got()) >= 3 })
	time.Sleep(300 * time.Millisecond)
	counts := map[string]int{}
	for _, r := range rcv.Got() {
		var p struct {
			Event string         `json:"event"`
			Data  map[string]any `json:"data"`
		}
		_ = json.Unmarshal(r.Body, &p)
		counts[p.Event+"/"+p.Data["message_type"].(string)]++
	}
	if len(rcv.Got()) != 3 || counts["message.sent/text"] != 1 || counts["message.outgoing/text"] != 1 || counts["message.outgoing/template"] != 1 {
		t.Fatalf("events %v", counts)
	}
}

// The delivery log through the api: a failed delivery shows what was sent
// and what the endpoint answered to those who may read contacts and
// messages, and nothing of the bodies to a user who may only read
// webhooks; a redelivery (webhooks:update) sends the event again and is
// logged as one; bad and unknown ids are refused.
func TestWebhookDeliveryLogAndRedelivery(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	admin := f.admin.Auth()
	rcv := apptest.NewReceiver(t)
	rcv.FailNext(503)
	var w webhookOut
	f.Do("POST", "/api/webhooks", map[string]any{"name": "CRM", "url": rcv.URL, "events": []string{"contact.created"}}, admin).
		Expect(t, 201).Into(t, &w)
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550009911", "name": "Zed"}, admin).Expect(t, 201)
	type delivery struct {
		ID           int64   `json:"id"`
		Attempt      int     `json:"attempt"`
		Success      bool    `json:"success"`
		StatusCode   int     `json:"status_code"`
		Redelivery   bool    `json:"redelivery"`
		RequestBody  *string `json:"request_body"`
		ResponseBody *string `json:"response_body"`
	}
	var log struct{ Items []delivery }
	apptest.Eventually(t, 10*time.Second, "the failed delivery logged", func() bool {
		f.Do("GET", "/api/webhooks/"+w.ID+"/deliveries", nil, admin).Expect(t, 200).Into(t, &log)
		return len(log.Items) > 0
	})
	failed := log.Items[len(log.Items)-1]
	if failed.Success || failed.StatusCode != 503 || failed.RequestBody == nil || !strings.Contains(*failed.RequestBody, "+15550009911") ||
		failed.ResponseBody == nil {
		t.Fatalf("failed delivery %+v", failed)
	}

	f.Do("POST", "/api/roles", map[string]any{"name": "Hook watcher", "permissions": []string{"webhooks:read"}}, admin).Expect(t, 201)
	watcher := f.CreateUser(admin, "hooks@example.test", "Hook watcher").Auth()
	var seen struct{ Items []delivery }
	f.Do("GET", "/api/webhooks/"+w.ID+"/deliveries", nil, watcher).Expect(t, 200).Into(t, &seen)
	if len(seen.Items) == 0 {
		t.Fatal("the watcher sees no delivery")
	}
	for _, d := range seen.Items {
		if d.RequestBody != nil || d.ResponseBody != nil {
			t.Fatalf("a user without contacts:read and messages:read reads the bodies: %+v", d)
		}
	}
	base := "/api/webhooks/" + w.ID + "/deliveries/"
	if r := f.Do("POST", base+strconv.FormatInt(failed.ID, 10)+"/redeliver", nil, watcher); r.Status != 403 {
		t.Fatalf("redelivery without webhooks:update: %d %s", r.Status, r.Body)
	}
	if r := f.Do("POST", base+"abc/redeliver", nil, admin); r.Status != 400 || r.Message != "deliveryId must be a positive integer" {
		t.Fatalf("a malformed id: %d %q", r.Status, r.Message)
	}
	if r := f.Do("POST", base+"999999999/redeliver", nil, admin); r.Status != 404 {
		t.Fatalf("an unknown id: %d %s", r.Status, r.Body)
	}
	// The failed delivery's own retry (about 2 s later) lands first, so it
	// cannot be counted as the redelivery's request.
	apptest.Eventually(t, 30*time.Second, "the automatic retry delivered", func() bool { return len(rcv.Got()) >= 2 })
	before := len(rcv.Got())
	var again delivery
	f.Do("POST", base+strconv.FormatInt(failed.ID, 10)+"/redeliver", nil, admin).Expect(t, 200).Into(t, &again)
	if !again.Success || !again.Redelivery || again.ID == failed.ID || again.RequestBody == nil || *again.RequestBody != *failed.RequestBody {
		t.Fatalf("redelivery %+v", again)
	}
	if len(rcv.Got()) != before+1 {
		t.Fatalf("the redelivery made %d requests", len(rcv.Got())-before)
	}
}
