package console

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"wharf/internal/apptest"
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
// values; a file with bad numbers shows their row numbers and creates
// nothing.
func TestConsoleCreatesACampaignFromACSV(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
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
	})
}
