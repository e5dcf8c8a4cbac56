package console

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wharf/internal/apptest"
)

// TestConsoleImports imports contacts from the imports page: the columns the
// server reads, 1,000 contacts counted, a file with bad rows showing their
// row numbers, and the recent imports listed after a reload; then exports
// them with a tag filter, unmasked and masked.
func TestConsoleImports(t *testing.T) {
	requireBrowser(t)
	e := apptest.New(t, nil)
	e.StartWorker()
	b := startBrowser(t, e.Server.URL)
	dir := t.TempDir()
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("1,000 contacts", func(t *testing.T) {
		p.in(t)
		var csv strings.Builder
		csv.WriteString("phone_number,name,tags\n")
		for i := range 1000 {
			fmt.Fprintf(&csv, "+1555%07d,Customer %d,spring\n", 3000000+i, i)
		}
		file := filepath.Join(dir, "contacts.csv")
		if err := os.WriteFile(file, []byte(csv.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		p.click("link", "Imports and exports")
		p.seeRole("heading", "Imports and exports")
		p.choose("Table", "Contacts")
		p.see("phone_number (required)")
		p.axe("imports page")
		p.shot("imports")
		p.upload("CSV file", file)
		p.click("button", "Import file")
		// First, while the notice shows (6 s): its counts read as the result's.
		p.see("Import done: 1,000 created, 0 updated, 0 refused.")
		p.seeRole("heading", "Import result")
		p.see("Created 1,000")
		p.see("Refused 0")
		var n int64
		e.DB.Raw(`SELECT count(*) FROM contacts`).Scan(&n)
		if n != 1000 {
			t.Fatalf("%d contacts stored", n)
		}
		p.axe("import result")
		p.shot("imported")
	})

	t.Run("bad rows show their row numbers", func(t *testing.T) {
		p.in(t)
		file := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(file, []byte("phone_number,name\n+15559000001,Good\nnot-a-number,Bad\n+15559000002,Good too\n,Empty\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p.upload("CSV file", file)
		p.click("button", "Import file")
		p.see("Created 2")
		p.see(`row 3: phone_number: "not-a-number" is not a phone number`)
		p.see("row 5: phone_number:")
		p.axe("import with errors")
		p.shot("bad-rows")
	})

	t.Run("recent imports after a reload", func(t *testing.T) {
		p.in(t)
		p.reload()
		p.seeRole("heading", "Recent imports")
		p.see("1,000 created · 0 updated · 0 skipped · 0 refused")
		p.see("2 created · 0 updated")
		p.see("2 imports")
		p.click("button", p.firstShowButton())
		p.see(`row 3: phone_number: "not-a-number" is not a phone number`)
		p.axe("recent imports")
		p.shot("recent")
	})

	// Issue 19: "export contacts or tags with the filters the API supports,
	// downloaded as a file; masking as the API applies".
	t.Run("an export with a filter, masked as the API masks", func(t *testing.T) {
		p.in(t)
		p.choose("Table to export", "Contacts")
		p.fill("Tags", "spring") // the 1,000 imported first, not the two of the bad file
		exported := func() (string, [][]string, string) {
			file, body := p.download("Download CSV")
			rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
			if err != nil || len(rows) == 0 {
				t.Fatalf("downloaded %s: %v: %.200s", file, err, body)
			}
			return file, rows, string(body)
		}
		file, rows, body := exported()
		if !strings.HasSuffix(file, ".csv") || len(rows) != 1001 || !slices.Contains(rows[0], "Phone Number") {
			t.Fatalf("downloaded %s: %d rows, header %v", file, len(rows), rows[0])
		}
		if !strings.Contains(body, "+15553000999") || strings.Contains(body, "+15559000001") {
			t.Fatalf("the tag filter was not applied: %.300s", body)
		}
		e.Do("PUT", "/api/org/settings", map[string]any{"mask_phone_numbers": true}, e.Admin().Auth()).Expect(t, 200)
		_, rows, body = exported()
		if len(rows) != 1001 || strings.Contains(body, "15553000999") || strings.Contains(body, "15553000000") {
			t.Fatalf("masked export: %d rows: %.300s", len(rows), body)
		}
		p.axe("export form")
	})
}

// firstShowButton is the name of the first "Show" button of the recent
// imports (named after the import's time).
func (p *page) firstShowButton() string {
	p.t.Helper()
	p.waitUntil("a Show button", `[...document.querySelectorAll('button[aria-label^="Show the import of"]')].length > 0`)
	return eval[string](p, `document.querySelector('button[aria-label^="Show the import of"]').getAttribute('aria-label')`)
}

// An import the api does not wait for (202) is followed on the page through
// its import.progress events: the page reads the job when an event says it
// moved, not every second, and shows the result when it is done.
func TestConsoleImportFollowedByItsEvents(t *testing.T) {
	requireBrowser(t)
	e := apptest.New(t, map[string]string{"IMPORT_WAIT": "0s"})
	e.StartWorker()
	b := startBrowser(t, e.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	file := filepath.Join(t.TempDir(), "few.csv")
	if err := os.WriteFile(file, []byte("phone_number,name\n+15559100001,One\n+15559100002,Two\n+15559100003,Three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.click("link", "Imports and exports")
	p.choose("Table", "Contacts")
	p.upload("CSV file", file)
	p.click("button", "Import file")
	p.seeRole("heading", "Import result")
	p.see("Created 3")
	var job string
	e.DB.Raw(`SELECT id::text FROM import_jobs ORDER BY created_at DESC LIMIT 1`).Scan(&job)
	if p.countRequests("GET "+e.Server.URL+"/api/events") == 0 {
		t.Fatalf("the page did not listen to /api/events: %v", p.requestsSeen())
	}
	// The first read, then one per event at most (running, checked, done).
	if n := p.countRequests("GET " + e.Server.URL + "/api/import/jobs/" + job); n == 0 || n > 4 {
		t.Fatalf("the page read the job %d times", n)
	}
	p.shot("followed")
}
