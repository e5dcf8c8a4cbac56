package console

import (
	"fmt"
	"testing"

	"wharf/internal/apptest"
)

// TestConsoleRecurringCampaign: an admin makes a campaign to contacts
// repeat daily, sees the next three runs the server computes (and its
// refusal of a too frequent custom schedule), creates it, starts the
// series and pauses it.
func TestConsoleRecurringCampaign(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your code is {{2}}", false)
	a := f.Admin.Auth()
	for i := 0; i < 3; i++ {
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": fmt.Sprintf("+1555%07d", 9000000+i), "name": fmt.Sprintf("Contact %d", i),
			"account_id": f.AccountID}, a).Expect(t, 201)
	}
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	p.open("/console/campaigns/new")
	p.seeRole("heading", "New campaign")
	p.fill("Name", "Daily codes")
	p.chooseOnce("Account", "Main")
	p.chooseOnce("Template", "order_update")
	p.toggle("From your contacts")
	p.choose("Placeholder {{1}}", "Contact name")
	p.choose("Placeholder {{2}}", "Fixed value")
	p.fill("Fixed value for Placeholder {{2}}", "DAILY")
	p.toggle("Repeat this campaign")
	p.choose("Schedule", "Every day")
	p.fill("Number of runs", "5")
	p.waitUntil("three next runs", `document.querySelectorAll('[aria-label="Next runs"] li').length === 3`)
	p.shot("recurring-next-runs")
	p.axe("the new campaign page with a repeat")

	// A custom schedule more often than hourly: the server's reason, and
	// no creating.
	p.choose("Schedule", "Custom (cron expression)")
	p.fill("Cron expression", "*/10 * * * *")
	p.see("occurrences must be at least 1h0m0s apart")
	if !eval[bool](p, `byRole('button', 'Create campaign').disabled`) {
		p.fatalf("Create campaign is enabled with a refused schedule")
	}
	p.shot("recurring-refused")
	p.fill("Cron expression", "30 8 * * 1-5")
	p.waitUntil("three next runs", `document.querySelectorAll('[aria-label="Next runs"] li').length === 3`)
	p.waitUntil("Create enabled", `!byRole('button', 'Create campaign').disabled`)
	p.click("button", "Create campaign")

	p.seeRole("heading", "Repeats")
	p.see("30 8 * * 1-5")
	p.see("Ends after 5 runs")
	p.click("button", "Start repeating")
	p.seeRole("button", "Pause the series")
	p.waitUntil("a next run", `document.querySelector('[data-next-run]') && /\d/.test(document.querySelector('[data-next-run]').textContent)`)
	p.see("No run yet.")
	p.shot("recurring-series")
	p.axe("a recurring campaign's page")
	p.click("button", "Pause the series")
	p.seeRole("button", "Resume the series")
	p.see("None while paused")
	var page struct {
		Items []struct {
			Status     string         `json:"status"`
			Recurrence map[string]any `json:"recurrence"`
		} `json:"items"`
	}
	f.Do("GET", "/api/campaigns", nil, a).Expect(t, 200).Into(t, &page)
	if len(page.Items) != 1 || page.Items[0].Status != "paused" || page.Items[0].Recurrence["cron"] != "30 8 * * 1-5" ||
		page.Items[0].Recurrence["max_runs"] != float64(5) {
		t.Fatalf("campaigns after the pause: %+v", page.Items)
	}
	p.shot("recurring-paused")
}
