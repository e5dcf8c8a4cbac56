package campaigns_test

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/infra/phone"
	"wharf/platformsim"
)

// The recipients export is a CSV of every recipient with its status and
// the provider's error, masked as the recipients list masks numbers and
// names, with cells a spreadsheet would run defused; ?status= keeps one
// status. Another organization's campaign is a 404, a user without
// campaigns:read a 403.
func TestRecipientsExport(t *testing.T) {
	t.Parallel()
	failing := strings.TrimPrefix(number(3), "+")
	f := newFixture(t, "TIER_UNLIMITED", nil, func(c *platformsim.Config) {
		noCap(c)
		c.FailRecipients = map[string]int{failing: 131026}
	})
	f.StartWorker()
	c := f.campaign(5, nil)
	a := f.Admin.Auth()

	// Before the start: the header and five pending recipients.
	rows := f.exportCSV(t, c.ID, "", a)
	if len(rows) != 6 || strings.Join(rows[0], ",") !=
		"phone_number,name,status,attempts,sent_at,delivered_at,read_at,failed_at,error_code,error_title,error_detail,replied_at" {
		t.Fatalf("export of a draft: %q", rows)
	}
	// A number starts with +, which a spreadsheet would read as a formula.
	if rows[1][0] != "'"+number(0) || rows[1][1] != "Customer 0" || rows[1][2] != "pending" {
		t.Fatalf("first row %q", rows[1])
	}

	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, a).Expect(t, 200)
	f.waitStatus(c.ID, "completed", 30*time.Second)
	apptest.Await(t, 20*time.Second, "the failed status", func() (bool, string) {
		got := f.get(c.ID)
		return got.FailedCount == 1, got.String()
	})

	failed := f.exportCSV(t, c.ID, "failed", a)
	if len(failed) != 2 || failed[1][0] != "'"+number(3) || failed[1][2] != "failed" || failed[1][8] != "131026" ||
		failed[1][9] == "" || failed[1][7] == "" {
		t.Fatalf("failed recipients: %q", failed)
	}
	if all := f.exportCSV(t, c.ID, "", a); len(all) != 6 {
		t.Fatalf("%d rows after the run", len(all))
	}

	// Masked numbers and names, as the list shows them.
	f.Do("PUT", "/api/organizations/settings", map[string]any{"mask_phone_numbers": true}, a).Expect(t, 200)
	masked := f.exportCSV(t, c.ID, "failed", a)
	// The provider's error detail is passed on as the provider wrote it (the
	// simulator's names the number), as the recipients list does.
	if masked[1][0] != "'"+phone.Mask(number(3)) || masked[1][1] != phone.MaskName("Customer 3") ||
		strings.Contains(strings.Join(masked[1][:10], ","), strings.TrimPrefix(number(3), "+")) {
		t.Fatalf("masked export %q", masked[1])
	}

	// The refusals.
	manager := f.CreateUser(a, "manager-export@example.test", "Manager")
	f.exportCSV(t, c.ID, "", manager.Auth()) // a manager reads campaigns
	agent := f.CreateUser(a, "agent-export@example.test", "Agent")
	f.Do("GET", "/api/campaigns/"+c.ID+"/recipients/export", nil, agent.Auth()).Expect(t, 403)
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, a).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, a).Expect(t, 200).Into(t, &inB)
	f.Do("GET", "/api/campaigns/"+c.ID+"/recipients/export", nil, inB.Auth()).Expect(t, 404)
	f.Do("GET", "/api/campaigns/not-an-id/recipients/export", nil, a).Expect(t, 400)
}

// exportCSV downloads the recipients export and parses it.
func (f *fixture) exportCSV(t *testing.T, id, status string, auth apptest.Auth) [][]string {
	t.Helper()
	path := "/api/campaigns/" + id + "/recipients/export"
	if status != "" {
		path += "?status=" + status
	}
	r := f.Do("GET", path, nil, auth).Expect(t, 200)
	if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" ||
		!strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="campaign-`) {
		t.Fatalf("export answered %s, %s", ct, r.Header.Get("Content-Disposition"))
	}
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, r.Body)
	}
	return rows
}
