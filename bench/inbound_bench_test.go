package bench_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platform"
)

func statusWebhook(phoneID, wamid, recipient, status string) []byte {
	return []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100001","phone_number_id":%q},
"statuses":[{"id":%q,"status":%q,"timestamp":"%d","recipient_id":%q}]}}]}]}`, phoneID, wamid, status, time.Now().Unix(), recipient))
}

// BenchmarkInboundWebhookAccept measures how fast the api verifies, stores
// and acknowledges provider webhooks (status webhooks) at several numbers of
// concurrent senders; processing is not included.
func BenchmarkInboundWebhookAccept(b *testing.B) {
	e := apptest.NewWithSim(b, map[string]string{"LOG_LEVEL": "error"}, nil)
	admin := e.Admin()
	e.ConnectAccount(admin.Auth(), "Bench")
	bodies := make([][]byte, 1000)
	for i := range bodies {
		bodies[i] = statusWebhook(e.PhoneNumberID(), fmt.Sprintf("wamid.bench%d", i), fmt.Sprintf("1555%07d", i), "delivered")
	}
	url := e.Server.URL + "/api/webhook"
	for _, p := range concurrencyLevels {
		parallel(b, p, "webhooks", func(i int64) time.Duration {
			body := bodies[i%int64(len(bodies))]
			t0 := time.Now()
			if code := post(b, url, map[string]string{platform.SignatureHeader: platform.Sign(e.AppSecret, body)}, body); code != 200 {
				b.Errorf("status %d", code)
			}
			return time.Since(t0)
		})
	}
}

// BenchmarkInboundStatusProcessing measures how many status webhooks per
// second the worker applies to the database: b.N messages are sent
// (inserted directly), b.N "delivered" webhooks are accepted by the api
// while no worker runs, then a worker is started and the clock runs until
// it has applied the last status.
func BenchmarkInboundStatusProcessing(b *testing.B) {
	e := apptest.NewWithSim(b, map[string]string{"LOG_LEVEL": "error", "WORKER_CONCURRENCY": "20"}, nil)
	admin := e.Admin()
	accountID := uuid.MustParse(e.ConnectAccount(admin.Auth(), "Bench"))
	orgID := uuid.MustParse(admin.User.OrganizationID)
	n := b.N
	contacts := make([]models.Contact, n)
	for i := range contacts {
		contacts[i] = models.Contact{ID: uuid.New(), OrganizationID: orgID, PhoneNumber: fmt.Sprintf("+1556%07d", i)}
		contacts[i].Metadata.V = map[string]any{}
	}
	if err := e.DB.CreateInBatches(contacts, 1000).Error; err != nil {
		b.Fatal(err)
	}
	msgs := make([]models.Message, n)
	bodies := make([][]byte, n)
	for i := range msgs {
		wamid := fmt.Sprintf("wamid.proc%d", i)
		msgs[i] = models.Message{ID: uuid.New(), OrganizationID: orgID, ContactID: contacts[i].ID, AccountID: &accountID,
			PlatformMessageID: &wamid, Direction: "outgoing", Type: "text", Status: "sent", OccurredAt: time.Now()}
		msgs[i].Content.V = map[string]any{"text": "x"}
		bodies[i] = statusWebhook(e.PhoneNumberID(), wamid, fmt.Sprintf("1556%07d", i), "delivered")
	}
	if err := e.DB.CreateInBatches(msgs, 1000).Error; err != nil {
		b.Fatal(err)
	}
	url := e.Server.URL + "/api/webhook"
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if code := post(b, url, map[string]string{platform.SignatureHeader: platform.Sign(e.AppSecret, bodies[i])}, bodies[i]); code != 200 {
					b.Errorf("status %d", code)
				}
			}
		}()
	}
	wg.Wait()
	b.ResetTimer()
	start := time.Now()
	e.StartWorker()
	for {
		var left int64
		e.DB.Model(&models.Message{}).Where("status = 'sent'").Count(&left)
		if left == 0 {
			break
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d statuses still unapplied", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(n)/elapsed.Seconds(), "statuses-applied/s")
}
