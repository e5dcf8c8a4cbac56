package e2e_test

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/platform"
)

// A webhook answered 200 is stored, also when the api crashes right after
// answering: the api (its own process) is killed with SIGKILL while 16
// clients post status webhooks, which the group commit writes in batches;
// every webhook it answered 200 is found in inbound_events afterwards.
// (One answered before its batch committed would be missing.)
func TestWebhooksAnsweredBeforeACrashAreStored(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	api, base := f.StartAPIProcess(nil)
	const clients, killAfter = 16, 300
	var (
		mu       sync.Mutex
		answered []string
		next     atomic.Int64
		killed   = make(chan struct{})
		once     sync.Once
		wg       sync.WaitGroup
	)
	client := &http.Client{Timeout: 10 * time.Second}
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				id := fmt.Sprintf("wamid.crash%d", i)
				body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":%q,"changes":[{"field":"messages","value":{
"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550100001","phone_number_id":%q},
"statuses":[{"id":%q,"status":"delivered","timestamp":"%d","recipient_id":"15550001111"}]}}]}]}`,
					f.WABA.ID, f.PhoneNumberID(), id, time.Now().Unix()))
				req, _ := http.NewRequest("POST", base+"/api/webhook", bytes.NewReader(body))
				req.Header.Set(platform.SignatureHeader, platform.Sign(f.AppSecret, body))
				res, err := client.Do(req)
				if err != nil {
					return // the api is gone
				}
				res.Body.Close()
				if res.StatusCode != 200 {
					t.Errorf("webhook %s: %d", id, res.StatusCode)
					return
				}
				mu.Lock()
				answered = append(answered, id)
				n := len(answered)
				mu.Unlock()
				if n >= killAfter {
					once.Do(func() { api.Kill(); close(killed) })
				}
			}
		}()
	}
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("the api did not answer enough webhooks")
	}
	wg.Wait()

	var stored []string
	if err := f.DB.Raw(`SELECT payload->'statuses'->0->>'id' FROM inbound_events WHERE account_id = ? AND kind = 'statuses'`,
		f.AccountID).Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, id := range stored {
		have[id] = true
	}
	var missing []string
	for _, id := range answered {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d webhooks answered 200 before the crash are not stored: %v", len(missing), len(answered), missing)
	}
	t.Logf("%d webhooks answered before the crash, %d stored (the rest were in flight)", len(answered), len(stored))
}
