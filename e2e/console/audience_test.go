package console

import (
	"bytes"
	"encoding/csv"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleCampaignFromContacts: an admin saves a segment of the VIP
// contacts (the live count says 3), then creates a campaign from contacts:
// the segment narrowed by a metadata condition (2 contacts), one
// placeholder from the contact's name and one from a metadata field;
// starts it, watches it complete, and sees a reply in its report. A
// reader of contacts sees the segments without the controls to change
// them.
func TestConsoleCampaignFromContacts(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, map[string]string{"CAMPAIGN_COUNTER_INTERVAL": "1s", "CAMPAIGN_SWEEP_INTERVAL": "1s"}, nil)
	f.StartWorker()
	a := f.Admin.Auth()
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "TIER_UNLIMITED"}, a).Expect(t, 200)
	f.SeedTemplate(f.OrgID, f.AccountID, "vip_offer", "Hi {{1}}, your code is {{2}}", false)
	for i, c := range []struct {
		name, city, coupon string
		vip                bool
	}{{"Ana", "Lisbon", "C-ANA", true}, {"Bo", "Porto", "C-BO", true}, {"Cy", "Lisbon", "C-CY", true}, {"Di", "Lisbon", "", false}} {
		var out struct{ ID string }
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": recipientNumber(i), "name": c.name, "account_id": f.AccountID,
			"metadata": map[string]any{"city": c.city, "coupon": c.coupon}}, a).Expect(t, 201).Into(t, &out)
		tags := []string{"regular"}
		if c.vip {
			tags = []string{"vip"}
		}
		f.Do("PUT", "/api/contacts/"+out.ID+"/tags", map[string]any{"tags": tags}, a).Expect(t, 200)
	}
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("a segment of the VIPs", func(t *testing.T) {
		p.in(t)
		p.open("/console/contacts")
		p.click("link", "Segments")
		p.seeRole("heading", "Segments")
		p.see("No segment yet.")
		p.click("button", "New segment")
		p.seeRole("heading", "New segment")
		p.fill("Segment name", "VIPs")
		p.toggle("vip")
		p.waitUntil("the live count", `/\b3 contacts now/.test(pageText())`)
		p.shot("segment-editor")
		p.axe("the segment editor")
		p.submitDialog()
		p.see("Segment VIPs saved.")
		p.see("any of vip")
	})

	var id string
	t.Run("a campaign from contacts", func(t *testing.T) {
		p.in(t)
		p.open("/console/campaigns/new")
		p.seeRole("heading", "New campaign")
		p.fill("Name", "VIP codes")
		p.chooseOnce("Account", "Main")
		p.chooseOnce("Template", "vip_offer")
		p.toggle("From your contacts")
		p.chooseOnce("Segment", "VIPs")
		p.waitUntil("the segment's count", `/\b3 contacts now/.test(pageText())`)
		p.click("button", "Add a metadata condition")
		p.fill("Field 1", "city")
		p.fill("Value 1", "Lisbon")
		p.waitUntil("the narrowed count", `/\b2 contacts now/.test(pageText())`)
		p.chooseOnce("Placeholder {{1}}", "Contact name")
		p.chooseOnce("Placeholder {{2}}", "Metadata field")
		p.fill("Metadata field for Placeholder {{2}}", "coupon")
		p.waitUntil("Create campaign enabled", `byRole('button', 'Create campaign') && !byRole('button', 'Create campaign').disabled`)
		p.shot("campaign-from-contacts")
		p.axe("the new campaign page with an audience")
		p.click("button", "Create campaign")
		p.waitUntil("the campaign's page", `/^\/console\/campaigns\/[0-9a-f-]{36}$/.test(location.pathname)`)
		id = regexp.MustCompile(`[0-9a-f-]{36}$`).FindString(p.path())
		p.see("Recipients from your contacts: Contacts in the chosen segment, whose city is “Lisbon”.")
		p.see("Taken when it starts.")
		p.click("button", "Start campaign")
		p.see("Campaign started.")
		p.waitUntil("100%", `pageText().includes('100% done · 2 of 2 recipients')`)
		p.seeRole("heading", "Report")
		p.see("Taken when it started")
	})

	t.Run("the report counts a reply", func(t *testing.T) {
		p.in(t)
		for _, to := range []string{recipientNumber(0), recipientNumber(2)} {
			msgs := f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID(), To: strings.TrimPrefix(to, "+")})
			if len(msgs) != 1 {
				t.Fatalf("%s got %d messages", to, len(msgs))
			}
			if body := string(msgs[0].Body); !strings.Contains(body, "C-ANA") && !strings.Contains(body, "C-CY") {
				t.Fatalf("%s got %s: want its coupon", to, body)
			}
		}
		f.Incoming(platformsim.Incoming{From: strings.TrimPrefix(recipientNumber(0), "+"), Type: "text", Text: "Thanks!"})
		apptest.Eventually(t, 30*time.Second, "the reply stored", func() bool {
			var n int64
			f.DB.Raw(`SELECT count(*) FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE c.phone_number = ? AND m.direction = 'incoming'`,
				recipientNumber(0)).Scan(&n)
			return n == 1
		})
		// The report counts replies again when its count is ten seconds old.
		deadline := time.Now().Add(apptest.WaitSlack * 30 * time.Second)
		for !eval[bool](p, `/Replied \(72 h\)\s*50\.0%/.test(pageText())`) {
			if time.Now().After(deadline) {
				p.fatalf("the reply never showed in the report")
			}
			time.Sleep(2 * time.Second)
			p.click("button", "Refresh")
		}
		p.see("1 replied")
		p.waitUntil("Ana's reply in the recipients", `[...document.querySelectorAll('tbody tr')].some((tr) =>
  tr.cells[1]?.textContent.trim() === 'Ana' && /\d{4}-\d{2}-\d{2}/.test(tr.cells[5]?.textContent ?? ''))`)
		p.shot("campaign-report")
		p.axe("the campaign report")
		var c struct {
			RepliedCount int `json:"replied_count"`
		}
		f.Do("GET", "/api/campaigns/"+id, nil, a).Expect(t, 200).Into(t, &c)
		if c.RepliedCount != 1 {
			t.Fatalf("replied_count %d", c.RepliedCount)
		}
		// The report's CSV: every recipient, Ana's reply with its time.
		file, body := p.download("Download recipients (CSV)")
		rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil || !strings.HasSuffix(file, ".csv") || len(rows) != 3 {
			t.Fatalf("downloaded %s: %d rows (%v): %s", file, len(rows), err, body)
		}
		col := slices.Index(rows[0], "replied_at")
		replied := 0
		for _, r := range rows[1:] {
			if col >= 0 && r[col] != "" {
				replied++
			}
		}
		if col < 0 || replied != 1 || !strings.Contains(string(body), recipientNumber(0)) {
			t.Fatalf("the CSV's replies: %s", body)
		}
	})

	t.Run("a reader sees segments without changing them", func(t *testing.T) {
		f.Do("POST", "/api/roles", map[string]any{"name": "Reader", "permissions": []string{"contacts:read"}}, a).Expect(t, 201)
		r := signInAs(t, b, f, "reader", "reader@wharf.test", "Reader")
		r.open("/console/segments")
		r.see("VIPs")
		if r.has("button", "New segment") || r.has("button", "Edit VIPs") || r.has("button", "Delete VIPs") {
			t.Fatal("a reader is offered to change segments")
		}
	})
}
