package console

import (
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleCampaignTestSend: from a draft campaign's page, "Send a test"
// sends its message to a number with the values typed in, says so, and
// leaves the campaign a draft with nothing counted.
func TestConsoleCampaignTestSend(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "TIER_UNLIMITED"}, f.Admin.Auth()).Expect(t, 200)
	tmpl := f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	c := createCampaign(t, f, "Autumn", tmpl.ID.String(), 3)
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	p.open("/console/campaigns/" + c.ID)
	p.seeRole("heading", "Autumn")
	p.click("button", "Send a test")
	p.seeRole("heading", "Send a test")
	p.fill("Send to", "+15558880101")
	p.waitUntil("the placeholders' fields", `!!labelled('Value for {{1}}') && !!labelled('Value for {{2}}')`)
	p.fill("Value for {{1}}", "Ann")
	p.fill("Value for {{2}}", "T-9")
	p.axe("test send")
	p.submitDialog()
	p.waitUntil("the result", `(document.querySelector('[aria-label="Test results"]')?.innerText ?? '').includes('+15558880101')`)
	p.see("Sent")
	p.shot("test-send")
	apptest.Eventually(t, 10*time.Second, "the test at the provider", func() bool {
		return len(f.Sim.Messages(platformsim.MessageFilter{To: "15558880101"})) == 1
	})
	if b := string(f.Sim.Messages(platformsim.MessageFilter{To: "15558880101"})[0].Body); !strings.Contains(b, `"Ann"`) || !strings.Contains(b, `"T-9"`) {
		t.Fatalf("the test message %s", b)
	}
	if got := campaignNow(t, f, c.ID); got.Status != "draft" || got.SentCount != 0 {
		t.Fatalf("after a test send the campaign is %+v", got)
	}
}
