package console

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// chooseOnce waits for an option whose text starts with option to be
// offered (lists load), then picks it.
func (p *page) chooseOnce(label, option string) {
	p.t.Helper()
	find := "[...labelled(" + js(label) + ").options].find((o) => norm(o.text).startsWith(" + js(option) + "))"
	p.waitUntil("the option "+option+" of "+label, "labelled("+js(label)+") && "+find)
	eval[bool](p, `(() => { const s = labelled(`+js(label)+`); s.value = `+find+`.value;
  s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
}

// setValue sets the value of the control labelled label and tells the
// page, as a date picker does.
func (p *page) setValue(label, value string) {
	p.t.Helper()
	p.waitUntil(label, "labelled("+js(label)+")")
	eval[bool](p, `(() => { const e = labelled(`+js(label)+`); e.value = `+js(value)+`;
  e.dispatchEvent(new Event('input', { bubbles: true })); e.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
}

// recipientsCSV writes n rows of Mobile, Customer, Order (and the extra
// lines given) to a file of the test.
func recipientsCSV(t *testing.T, name string, n int, extra string) string {
	var b bytes.Buffer
	b.WriteString("Mobile,Customer,Order\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "+1555%07d,Customer %d,A-%05d\n", 8000000+i, i, i)
	}
	b.WriteString(extra)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConsoleCreatesACampaignFromACSV: an admin creates a campaign from a
// spreadsheet of 200 rows, one placeholder from a column and one a fixed
// value, and lands on the campaign, whose recipients carry the mapped
// values; starts it there and watches it finish against the simulator, the
// one recipient the provider refuses shown with its error; resends a
// recipient whose outcome was lost. A file with bad numbers shows their row
// numbers and creates nothing; a schedule is read in the organization's zone.
func TestConsoleCreatesACampaignFromACSV(t *testing.T) {
	requireBrowser(t)
	failing := fmt.Sprintf("1555%07d", 8000000+7) // row 8 of the file
	f := apptest.NewFixture(t, map[string]string{"CAMPAIGN_COUNTER_INTERVAL": "1s", "CAMPAIGN_SWEEP_INTERVAL": "1s", "CAMPAIGN_SENDING_TIMEOUT": "1s"},
		func(c *platformsim.Config) { c.FailRecipients = map[string]int{failing: 131026} })
	f.StartWorker()
	f.StartScheduler()
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "TIER_UNLIMITED"}, f.Admin.Auth()).Expect(t, 200)
	f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi, your order {{1}} ships with code {{2}}", false)
	b := startBrowser(t, f.Server.URL)
	a := f.Admin.Auth()
	count := func() int {
		var page struct{ Total int }
		f.Do("GET", "/api/campaigns", nil, a).Expect(t, 200).Into(t, &page)
		return page.Total
	}

	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	p.open("/console/campaigns/new")
	p.seeRole("heading", "New campaign")

	t.Run("bad rows are listed with their row numbers and nothing is created", func(t *testing.T) {
		p.in(t)
		p.fill("Name", "Broken list")
		p.chooseOnce("Account", "Main")
		p.chooseOnce("Template", "order_update")
		p.see("Hi, your order {{1}} ships with code {{2}}")
		p.upload("Recipients (CSV file)", recipientsCSV(t, "bad.csv", 10, "12ab,Bad,A-1\n,Nobody,A-2\n"))
		p.seeRole("heading", "2 rows cannot be imported")
		p.see(`Row 12: Mobile: "12ab" is not a phone number`)
		p.see("Row 13: Mobile: missing")
		p.shot("create-bad-rows")
		p.axe("the new campaign page with bad rows")
		if !eval[bool](p, `byRole('button', 'Create campaign').disabled`) {
			p.fatalf("Create campaign is enabled with bad rows")
		}
		if n := count(); n != 0 {
			t.Fatalf("%d campaigns after a bad file", n)
		}
	})

	t.Run("200 rows with a column and a fixed value", func(t *testing.T) {
		p.in(t)
		p.reload()
		p.seeRole("heading", "New campaign")
		p.fill("Name", "Spring sale")
		p.chooseOnce("Account", "Main")
		p.chooseOnce("Template", "order_update")
		p.upload("Recipients (CSV file)", recipientsCSV(t, "good.csv", 200, ""))
		p.see("200 rows: 200 recipients")
		p.see("First rows of the file")
		p.see("Customer 4")
		p.chooseOnce("Placeholder {{1}}", "Column Order")
		p.chooseOnce("Placeholder {{2}}", "Fixed value")
		p.fill("Fixed value for Placeholder {{2}}", "SPRING24")
		p.waitUntil("Create campaign enabled", `byRole('button', 'Create campaign') && !byRole('button', 'Create campaign').disabled`)
		p.shot("create-mapped")
		p.axe("the new campaign page with a mapping")
		p.click("button", "Create campaign")
		p.waitUntil("the campaign's page", `/^\/console\/campaigns\/[0-9a-f-]{36}$/.test(location.pathname)`)
		p.shot("create-done")
		id := regexp.MustCompile(`[0-9a-f-]{36}$`).FindString(p.path())
		var c struct {
			Name            string            `json:"name"`
			Status          string            `json:"status"`
			TotalRecipients int               `json:"total_recipients"`
			VariableMapping map[string]string `json:"variable_mapping"`
		}
		f.Do("GET", "/api/campaigns/"+id, nil, a).Expect(t, 200).Into(t, &c)
		if c.Name != "Spring sale" || c.Status != "draft" || c.TotalRecipients != 200 || c.VariableMapping["1"] != "1" || c.VariableMapping["2"] != "2" {
			t.Fatalf("campaign: %+v", c)
		}
		var page struct {
			Total int
			Items []struct {
				Name string         `json:"name"`
				Data map[string]any `json:"data"`
			}
		}
		f.Do("GET", "/api/campaigns/"+id+"/recipients?limit=500", nil, a).Expect(t, 200).Into(t, &page)
		if page.Total != 200 || len(page.Items) != 200 {
			t.Fatalf("%d recipients", page.Total)
		}
		for i, r := range page.Items {
			if r.Data["1"] != fmt.Sprintf("A-%05d", i) || r.Data["2"] != "SPRING24" || len(r.Data) != 2 {
				t.Fatalf("recipient %d: %+v", i, r)
			}
		}
		if n := count(); n != 1 {
			t.Fatalf("%d campaigns", n)
		}

		// Started from its page, watched to the end: the spreadsheet's
		// campaign reaches every recipient but the one the provider refuses.
		p.click("button", "Start campaign")
		p.see("Campaign started.")
		p.waitUntil("100%", `pageText().includes('100% done · 200 of 200 recipients')`)
		p.waitUntil("the failed recipient counted", `/Failed 1\b/.test(pageText())`)
		p.see("Completed")
		p.choose("Recipient status", "Failed")
		p.see("+" + failing)
		p.see("131026: ")
		p.shot("create-completed")
		sent := map[string]int{}
		for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
			if m.Type == "template" {
				sent[m.To]++
			}
		}
		// The simulator records every send it was asked for, the refused one
		// included: each number exactly once.
		if len(sent) != 200 || sent[failing] != 1 {
			t.Fatalf("the provider was asked for %d numbers (the failing one %d times)", len(sent), sent[failing])
		}
		for n, k := range sent {
			if k != 1 {
				t.Fatalf("%s was sent %d times", n, k)
			}
		}

		// A recipient whose send outcome was lost (a worker that died
		// mid-send leaves it "sending"; the sweep calls it unknown) is resent
		// from the page: requeued, then sent when the campaign resumes.
		lost := "+15559990001"
		f.DB.Exec(`INSERT INTO campaign_recipients (campaign_id, organization_id, phone_number, name, data, status, send_started_at)
			VALUES (?, ?, ?, 'Lost', '{"1": "A-LOST", "2": "SPRING24"}', 'sending', now() - interval '1 minute')`, id, f.OrgID, lost)
		f.DB.Exec(`UPDATE campaigns SET status = 'sending' WHERE id = ?`, id)
		p.choose("Recipient status", "All statuses")
		p.waitUntil("the lost recipient counted as unknown", `/Unknown 1\b/.test(pageText()) && !!byRole('button', 'Resend unknown')`)
		p.axe("a completed campaign with an unknown recipient")
		p.shot("create-unknown")
		p.click("button", "Resend unknown")
		p.see("1 unknown recipients requeued; resume the campaign to send them.")
		p.click("button", "Resume campaign")
		p.see("Campaign resumed.")
		p.waitUntil("the lost recipient sent", `/Unknown 0\b/.test(pageText()) && pageText().includes('100% done · 201 of 201 recipients')`)
		apptest.Eventually(t, 20*time.Second, "the lost recipient reached the provider once", func() bool {
			n := 0
			for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
				if m.Type == "template" && m.To == strings.TrimPrefix(lost, "+") {
					n++
				}
			}
			return n == 1
		})
	})

	t.Run("a schedule is read in the organization's zone", func(t *testing.T) {
		p.in(t)
		f.Do("PUT", "/api/org/settings", map[string]string{"timezone": "Europe/Madrid"}, a).Expect(t, 200)
		p.open("/console/campaigns/new")
		p.seeRole("heading", "New campaign")
		p.fill("Name", "Winter sale")
		p.chooseOnce("Account", "Main")
		p.chooseOnce("Template", "order_update")
		p.upload("Recipients (CSV file)", recipientsCSV(t, "winter.csv", 3, ""))
		p.see("3 rows: 3 recipients")
		p.chooseOnce("Placeholder {{1}}", "Column Order")
		p.chooseOnce("Placeholder {{2}}", "Column Customer")
		// A date-time control takes its value in parts from the keyboard,
		// in the browser's own order: the value is set as a picker would.
		p.setValue("Schedule (optional)", "2030-01-15T09:30")
		p.waitUntil("Create campaign enabled", `byRole('button', 'Create campaign') && !byRole('button', 'Create campaign').disabled`)
		p.click("button", "Create campaign")
		p.waitUntil("the campaign's page", `/^\/console\/campaigns\/[0-9a-f-]{36}$/.test(location.pathname)`)
		id := regexp.MustCompile(`[0-9a-f-]{36}$`).FindString(p.path())
		var c struct {
			ScheduledAt *time.Time `json:"scheduled_at"`
		}
		f.Do("GET", "/api/campaigns/"+id, nil, a).Expect(t, 200).Into(t, &c)
		// 09:30 in Madrid in January is 08:30 UTC.
		if want := time.Date(2030, 1, 15, 8, 30, 0, 0, time.UTC); c.ScheduledAt == nil || !c.ScheduledAt.Equal(want) {
			t.Fatalf("scheduled_at %v, want %v", c.ScheduledAt, want)
		}
		p.see("scheduled for 2030-01-15 09:30")
		p.seeRole("button", "Schedule campaign")
		p.shot("create-scheduled")
	})
}
