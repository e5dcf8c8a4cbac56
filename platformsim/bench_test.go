package platformsim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSendWithStatuses measures the send path plus the three status
// webhooks of every message, against a receiver that only counts.
func BenchmarkSendWithStatuses(b *testing.B) {
	var received atomic.Int64
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
	}))
	defer hooks.Close()
	sim := New(Config{WebhookURL: hooks.URL, ThroughputPerSecond: -1})
	defer sim.Close()
	ba := sim.AddBusinessAccount(BusinessAccount{AccessToken: "t", PhoneNumbers: []PhoneNumber{{}}})
	path := "/v21.0/" + ba.PhoneNumbers[0].ID + "/messages"
	body := []byte(`{"messaging_product":"whatsapp","recipient_type":"individual","to":"15551234567","type":"text","text":{"body":"hello"}}`)

	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer t")
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			sim.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("send: %d %s", rec.Code, rec.Body)
			}
		}
	})
	// Webhooks trail the sends: wait for them so that the time includes
	// posting 3 statuses per message.
	want := int64(3 * b.N)
	for received.Load() < want {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
