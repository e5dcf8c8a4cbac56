package console

import (
	"fmt"
	"strings"
	"testing"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

type campaignOut struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	SentCount   int    `json:"sent_count"`
	FailedCount int    `json:"failed_count"`
	PauseReason string `json:"pause_reason"`
}

func recipientNumber(i int) string { return fmt.Sprintf("+1555%07d", 7000000+i) }

// createCampaign makes a draft campaign of n recipients through the API,
// as the create page would.
func createCampaign(t *testing.T, f *apptest.Fixture, name, templateID string, n int) campaignOut {
	t.Helper()
	var c campaignOut
	f.Do("POST", "/api/campaigns", map[string]any{"name": name, "account_id": f.AccountID, "template_id": templateID,
		"variable_mapping": map[string]string{"1": "name", "2": "order_id"}}, f.Admin.Auth()).Expect(t, 201).Into(t, &c)
	recipients := make([]map[string]any, n)
	for i := range recipients {
		recipients[i] = map[string]any{"phone_number": recipientNumber(i), "name": fmt.Sprintf("Customer %d", i), "order_id": fmt.Sprintf("A-%05d", i)}
	}
	f.Do("POST", "/api/campaigns/"+c.ID+"/recipients/import", map[string]any{"recipients": recipients}, f.Admin.Auth()).Expect(t, 200)
	return c
}

func campaignNow(t *testing.T, f *apptest.Fixture, id string) campaignOut {
	var c campaignOut
	f.Do("GET", "/api/campaigns/"+id, nil, f.Admin.Auth()).Expect(t, 200).Into(t, &c)
	return c
}

// TestConsoleCampaigns drives the campaign pages against the real system and
// the provider's simulator: who sees them, the list and its filter in the
// URL, a campaign of 200 recipients started, paused and resumed from its
// page and watched to 100% with its failed recipient's error, a campaign
// the system paused for its account's payment problem saying why and what
// to do, and a cancel that asks first.
func TestConsoleCampaigns(t *testing.T) {
	requireBrowser(t)
	failing := strings.TrimPrefix(recipientNumber(7), "+")
	f := apptest.NewFixture(t, map[string]string{"CAMPAIGN_COUNTER_INTERVAL": "1s", "CAMPAIGN_SWEEP_INTERVAL": "1s"},
		func(c *platformsim.Config) { c.FailRecipients = map[string]int{failing: 131026} })
	f.StartWorker()
	admin := f.Admin
	// 10 messages a second: the campaign is still sending when the page
	// pauses it.
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "TIER_1K"}, admin.Auth()).Expect(t, 200)
	tmpl := f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	b := startBrowser(t, f.Server.URL)

	t.Run("a user without campaigns:read does not see them", func(t *testing.T) {
		f.CreateUser(admin.Auth(), "agent@wharf.test", "Agent")
		a := b.newPage(t, "agent")
		a.open("/console/")
		signIn(a, "agent@wharf.test", "password-123", "User agent@wharf.test")
		a.seeRole("link", "Overview")
		if a.has("link", "Campaigns") || a.has("link", "Imports and exports") {
			t.Fatal("an agent is shown Campaigns or Imports in the navigation")
		}
		a.open("/console/campaigns")
		a.seeRole("heading", "You cannot open this page")
		a.axe("refused campaigns")
		a.shot("agent-refused")
	})

	big := createCampaign(t, f, "Spring sale", tmpl.ID.String(), 200)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("the list with its filter in the URL", func(t *testing.T) {
		p.in(t)
		p.click("link", "Campaigns")
		p.seeRole("heading", "Campaigns")
		p.seeRole("link", "Spring sale")
		p.seeRole("link", "New campaign")
		p.see("0 sent · 0 delivered · 0 read · 0 failed of 200")
		p.choose("Status", "Paused")
		p.see("No paused campaign.")
		if got := p.path(); got != "/console/campaigns?status=paused" {
			t.Fatalf("the filter is not in the URL: %s", got)
		}
		p.reload()
		p.see("No paused campaign.")
		p.choose("Status", "Draft")
		p.seeRole("link", "Spring sale")
		p.axe("campaigns list")
		p.shot("list")
	})

	t.Run("started, paused and resumed from its page, watched to 100%", func(t *testing.T) {
		p.in(t)
		p.click("link", "Spring sale")
		p.seeRole("heading", "Spring sale")
		p.see("0% done · 0 of 200 recipients")
		p.axe("draft campaign")
		p.shot("draft")
		p.click("button", "Start campaign")
		p.see("Campaign started.")
		p.see("Updates live.")
		// The counters move while the page is watched.
		p.waitUntil("some sends shown", `/\b([1-9]\d*)% done/.test(pageText()) || /Sent [1-9]/.test(pageText())`)
		p.shot("sending")
		p.click("button", "Pause campaign")
		p.see("Campaign paused.")
		p.seeRole("button", "Resume campaign")
		if c := campaignNow(t, f, big.ID); c.Status != "paused" {
			t.Fatalf("after the page's pause the campaign is %s", c.Status)
		}
		p.axe("paused campaign")
		p.shot("paused")
		p.click("button", "Resume campaign")
		p.see("Campaign resumed.")
		p.waitUntil("100%", `pageText().includes('100% done · 200 of 200 recipients')`)
		// The counters came from the live-event store's stream, not from
		// polling: the progress was read once on opening and once after each
		// action (start, pause, resume), and the per-campaign stream is not used.
		if n := p.countRequests("GET " + f.Server.URL + "/api/campaigns/" + big.ID + "/progress"); n > 4 {
			t.Fatalf("the page read the progress %d times: it polled instead of listening", n)
		}
		if p.countRequests("GET "+f.Server.URL+"/api/events") == 0 || p.countRequests("/progress/stream") > 0 {
			t.Fatalf("the page did not listen to /api/events: %v", p.requestsSeen())
		}
		p.waitUntil("the failed recipient counted", `/Failed 1\b/.test(pageText())`)
		p.see("Completed")
		p.choose("Recipient status", "Failed")
		p.see(recipientNumber(7))
		p.see("131026: ")
		if got := p.path(); got != "/console/campaigns/"+big.ID+"?status=failed" {
			t.Fatalf("the recipients filter is not in the URL: %s", got)
		}
		p.axe("completed campaign")
		p.shot("completed")
	})

	t.Run("a campaign the system paused says why and what to do", func(t *testing.T) {
		p.in(t)
		small := createCampaign(t, f, "Payment trouble", tmpl.ID.String(), 5)
		if err := f.Sim.SetSendError(f.PhoneNumberID(), 131042); err != nil {
			t.Fatal(err)
		}
		p.open("/console/campaigns/" + small.ID)
		p.seeRole("heading", "Payment trouble")
		p.click("button", "Start campaign")
		p.seeRole("heading", "The provider refused the account: a payment problem")
		p.see("Fix the payment method of the business account")
		p.see("131042")
		p.seeRole("button", "Resume campaign")
		p.axe("faulted campaign")
		p.shot("faulted")

		// Resuming with the account still broken shows the API's reason.
		apptest.Eventually(t, waitFor, "the account disconnected", func() bool {
			var a struct{ Status string }
			f.Do("GET", "/api/accounts/"+f.AccountID, nil, admin.Auth()).Expect(t, 200).Into(t, &a)
			return a.Status == "disconnected"
		})
		p.click("button", "Resume campaign")
		p.seeRole("alert", "")
		p.see("not active")

		// Cancelling asks first; keeping it changes nothing.
		p.click("button", "Cancel campaign")
		p.seeRole("dialog", "")
		p.see("Cancelling is final")
		p.axe("cancel dialog")
		p.shot("cancel-dialog")
		p.click("button", "Keep the campaign")
		if c := campaignNow(t, f, small.ID); c.Status != "paused" {
			t.Fatalf("kept, the campaign is %s", c.Status)
		}
		p.click("button", "Cancel campaign")
		p.click("button", "Cancel the campaign for good")
		p.see("Campaign cancelled.")
		apptest.Eventually(t, waitFor, "the campaign cancelled", func() bool { return campaignNow(t, f, small.ID).Status == "cancelled" })
		p.waitUntil("no more actions", `!byRole('button', 'Resume campaign') && !byRole('button', 'Cancel campaign')`)
	})
}

// TestConsoleCampaignSkippedCount: a marketing campaign whose recipient
// opted out of marketing shows it on its page as skipped, apart from the
// failed ones.
func TestConsoleCampaignSkippedCount(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, map[string]string{"CAMPAIGN_COUNTER_INTERVAL": "1s", "CAMPAIGN_SWEEP_INTERVAL": "1s"}, nil)
	f.StartWorker()
	admin := f.Admin
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "TIER_UNLIMITED"}, admin.Auth()).Expect(t, 200)
	tmpl := f.SeedTemplate(f.OrgID, f.AccountID, "spring_offer", "Hi {{1}}, offer {{2}}", false)
	f.DB.Exec(`UPDATE templates SET category = 'MARKETING' WHERE id = ?`, tmpl.ID)
	var contact struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": recipientNumber(1)}, admin.Auth()).Expect(t, 201).Into(t, &contact)
	f.Do("PUT", "/api/contacts/"+contact.ID+"/opt-out", map[string]any{"marketing_opt_out": true}, admin.Auth()).Expect(t, 200)
	c := createCampaign(t, f, "Offers", tmpl.ID.String(), 3)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, admin.Auth()).Expect(t, 200)

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	p.open("/console/campaigns/" + c.ID)
	p.seeRole("heading", "Offers")
	p.waitUntil("100%", `pageText().includes('100% done · 3 of 3 recipients')`)
	p.waitUntil("the skipped recipient counted", `/Skipped \(opted out\)\s*1\b/.test(pageText()) && /Failed\s*0\b/.test(pageText())`)
	p.choose("Recipient status", "Skipped")
	p.see(recipientNumber(1))
	p.see("opted out of marketing")
	p.axe("campaign with a skipped recipient")
	p.shot("skipped")
}

// countRequests counts the requests the page sent that are want, or end
// with it.
func (p *page) countRequests(want string) int {
	n := 0
	for _, r := range p.requestsSeen() {
		if r == want || strings.HasSuffix(r, want) {
			n++
		}
	}
	return n
}

func (p *page) requestsSeen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}
