package campaigns_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// A recipient left "sending" by a dead worker is not resent: the sweep marks
// it unknown with a reason, and a provider status carrying its id (the
// message was accepted after all) settles it.
func TestUnknownOutcomeIsSurfacedThenSettledByTheProvider(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", map[string]string{"CAMPAIGN_SENDING_TIMEOUT": "1s"}, noCap)
	f.StartWorker()
	f.StartScheduler()
	c := f.campaign(3, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	f.waitStatus(c.ID, "completed", 20*time.Second)
	// A fourth recipient as a crash leaves it: claimed, never answered.
	var rec models.CampaignRecipient
	f.DB.Take(&rec, "campaign_id = ? AND phone_number = ?", c.ID, number(0))
	f.DB.Exec(`INSERT INTO campaign_recipients (campaign_id, organization_id, phone_number, name, status, send_started_at, attempts)
		VALUES (?, ?, '+15559990001', 'Crash', 'sending', now() - interval '1 minute', 1)`, c.ID, f.OrgID)
	f.DB.Exec(`UPDATE campaigns SET status = 'sending' WHERE id = ?`, c.ID)
	var crashed models.CampaignRecipient
	f.DB.Take(&crashed, "phone_number = ?", "+15559990001")

	var list struct {
		Items []struct {
			Status string `json:"status"`
			Error  struct {
				Title  string `json:"title"`
				Detail string `json:"detail"`
			} `json:"error"`
		} `json:"items"`
	}
	apptest.Eventually(t, 15*time.Second, "unknown", func() bool {
		f.Do("GET", "/api/campaigns/"+c.ID+"/recipients?status=unknown", nil, f.Admin.Auth()).Expect(t, 200).Into(t, &list)
		return len(list.Items) == 1
	})
	if !strings.Contains(list.Items[0].Error.Title, "unknown") || !strings.Contains(list.Items[0].Error.Detail, "not resent") {
		t.Fatalf("reason %+v", list.Items[0])
	}
	got := f.waitStatus(c.ID, "completed", 10*time.Second) // unknown does not keep a campaign open
	apptest.Eventually(t, 10*time.Second, "unknown counter", func() bool { got = f.get(c.ID); return got.UnknownCount == 1 })
	if f.sends()["+15559990001"] != 0 {
		t.Fatal("the unknown recipient was resent")
	}

	// The provider did accept it: its delivered status names the recipient.
	body := []byte(fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"1","phone_number_id":%q},
		"statuses":[{"id":"wamid.lost-answer","status":"delivered","timestamp":"%d","recipient_id":"15559990001",
		"biz_opaque_callback_data":"r:%s"}]}}]}]}`, f.PhoneNumberID(), time.Now().Unix(), crashed.ID))
	req, _ := http.NewRequest("POST", f.Server.URL+"/api/webhook", bytes.NewReader(body))
	req.Header.Set(platform.SignatureHeader, platform.Sign(f.AppSecret, body))
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("webhook: %v %v", res, err)
	}
	res.Body.Close()
	apptest.Eventually(t, 10*time.Second, "settled", func() bool {
		f.DB.Take(&crashed, "id = ?", crashed.ID)
		return crashed.Status == "delivered"
	})
	if crashed.PlatformMessageID == nil || *crashed.PlatformMessageID != "wamid.lost-answer" || crashed.ErrorTitle != "" {
		t.Fatalf("settled recipient %+v", crashed)
	}
	apptest.Eventually(t, 10*time.Second, "counters", func() bool {
		got = f.get(c.ID)
		return got.UnknownCount == 0 && got.DeliveredCount == 4 && got.SentCount == 4
	})
}

// The tier that paces campaigns comes from the provider unless overridden.
func TestMessagingTierOverride(t *testing.T) {
	t.Parallel()
	f := apptest.NewFixture(t, nil, nil)
	type detail struct {
		MessagingLimit        string `json:"messaging_limit"`
		MessagingTier         string `json:"messaging_tier"`
		MessagingTierOverride string `json:"messaging_tier_override"`
	}
	var d detail
	f.Do("GET", "/api/accounts/"+f.AccountID, nil, f.Admin.Auth()).Expect(t, 200).Into(t, &d)
	if d.MessagingLimit != "TIER_1K" || d.MessagingTier != "TIER_1K" || d.MessagingTierOverride != "" {
		t.Fatalf("from the provider %+v", d)
	}
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "TIER_9K"}, f.Admin.Auth()).Expect(t, 400)
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "tier_100k"}, f.Admin.Auth()).Expect(t, 200).Into(t, &d)
	if d.MessagingTier != "TIER_100K" || d.MessagingTierOverride != "TIER_100K" {
		t.Fatalf("override %+v", d)
	}
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": ""}, f.Admin.Auth()).Expect(t, 200).Into(t, &d)
	if d.MessagingTier != "TIER_1K" {
		t.Fatalf("cleared %+v", d)
	}
}

// A campaign that keeps every lane busy does not delay inbound processing:
// lanes run in a pool of their own. The incoming message is stored while
// the campaign still has recipients to send (its lanes hold every campaign
// slot for about 8 s, a send taking a second), which a shared pool would
// not allow; how soon is logged, not asserted (a busy machine is slower
// at everything).
//
// Not parallel: it keeps 16 lanes busy.
func TestBusyCampaignDoesNotDelayInboundProcessing(t *testing.T) {
	f := newFixture(t, "TIER_UNLIMITED", map[string]string{"CAMPAIGN_LANES": "16", "CAMPAIGN_CONCURRENCY": "16", "WORKER_CONCURRENCY": "4"},
		func(c *platformsim.Config) { noCap(c); c.Latency = time.Second })
	f.StartWorker()
	c := f.campaign(2000, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, f.Admin.Auth()).Expect(t, 200)
	apptest.Eventually(t, 20*time.Second, "lanes busy", func() bool { return f.recipientsBy(c.ID)["sending"] >= 10 })
	start := time.Now()
	f.Incoming(platformsim.Incoming{From: "15550009999", Type: "text", Text: "urgent"})
	apptest.Eventually(t, 5*time.Second, "incoming stored", func() bool {
		var n int64
		f.DB.Model(&models.Message{}).Where("content->>'text' = 'urgent'").Count(&n)
		return n == 1
	})
	by := f.recipientsBy(c.ID)
	t.Logf("inbound stored %s after the webhook, the campaign's recipients by status %v", time.Since(start).Round(time.Millisecond), by)
	if by["pending"] == 0 {
		t.Fatalf("the incoming message was stored only once the campaign had sent everyone: %v", by)
	}
	f.Do("POST", "/api/campaigns/"+c.ID+"/cancel", nil, f.Admin.Auth()).Expect(t, 200)
}
