package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
)

type importResult struct {
	Created  int      `json:"created"`
	Updated  int      `json:"updated"`
	Skipped  int      `json:"skipped"`
	Errors   int      `json:"errors"`
	Messages []string `json:"messages"`
}

func (f *fixture) importCSV(t *testing.T, auth apptest.Auth, table, file string, mapping string, update bool) *apptest.Resp {
	t.Helper()
	fields := map[string]string{"table": table}
	if mapping != "" {
		fields["column_mapping"] = mapping
	}
	if update {
		fields["update_on_duplicate"] = "true"
	}
	return f.Upload("/api/import", fields, "file", "import.csv", []byte(file), auth)
}

func (f *fixture) imported(t *testing.T, auth apptest.Auth, table, file string, mapping string, update bool) importResult {
	t.Helper()
	var res importResult
	f.importCSV(t, auth, table, file, mapping, update).Expect(t, 200).Into(t, &res)
	return res
}

func (f *fixture) count(t *testing.T, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := f.DB.Raw(q, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// A 10,000-row contacts file through the api and the worker: good rows,
// bad rows (numbers, accounts, users), duplicates in the file, a quoted
// field over three lines near the top; the counts are exact and each
// message names the row a spreadsheet shows.
func TestImportTenThousandContacts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	agent := f.CreateUser(a, "importer@example.test", "Agent")
	tf := testfactory.New(t, f.DB)
	other := tf.Org()
	tf.Account(other.ID, func(acc *models.PlatformAccount) { acc.Name = "Elsewhere" })
	outsider := tf.User(other, "Admin")

	var file bytes.Buffer
	file.WriteString("\xEF\xBB\xBFPhone Number;Name;Tags;Platform Account;Assigned User ID\r\n")
	var created, skipped, bad int
	var msgs []string
	for i := 0; i < 10000; i++ {
		row := i + 2 // the header is row 1; no record before row i spans lines but the first's
		number := fmt.Sprintf("+1555%07d", i)
		switch {
		case i == 0:
			file.WriteString(number + ";\"Ann\nof three\nlines\";vip;Main;" + agent.User.ID + "\r\n")
			created++
		case i%100 == 7:
			fmt.Fprintf(&file, "%s;Dup;;;\r\n", fmt.Sprintf("+1555%07d", i-1)) // the row before's number
			skipped++
			msgs = append(msgs, fmt.Sprintf("row %d: phone_number: +1555%07d repeats row %d; skipped", row, i-1, row-1))
		case i%100 == 13:
			fmt.Fprintf(&file, "12ab%d;Bad;;;\r\n", i)
			bad++
			msgs = append(msgs, fmt.Sprintf("row %d: phone_number: \"12ab%d\" is not a phone number", row, i))
		case i%1000 == 21:
			fmt.Fprintf(&file, "%s;Foreign;;Elsewhere;\r\n", number)
			bad++
			msgs = append(msgs, fmt.Sprintf("row %d: platform_account: \"Elsewhere\" is not an account of this organization", row))
		case i%1000 == 22:
			fmt.Fprintf(&file, "%s;Outsider;;;%s\r\n", number, outsider.ID)
			bad++
			msgs = append(msgs, fmt.Sprintf("row %d: assigned_user_id: %s is not a member of this organization", row, outsider.ID))
		default:
			fmt.Fprintf(&file, "%s;C%d;\"lead, batch%d\";;\r\n", number, i, i%3)
			created++
		}
	}
	// The first row spans three lines: every later row is still the
	// record's number as a spreadsheet shows it, not the file's line.
	start := time.Now()
	res := f.imported(t, a, "contacts", file.String(), "", false)
	t.Logf("10,000 rows imported in %s", time.Since(start))
	if res.Created != created || res.Skipped != skipped || res.Errors != bad || res.Updated != 0 {
		t.Fatalf("result %d created %d skipped %d errors, want %d %d %d", res.Created, res.Skipped, res.Errors, created, skipped, bad)
	}
	if strings.Join(res.Messages, "\n") != strings.Join(msgs, "\n") {
		t.Fatalf("messages differ; first got %q, want %q", res.Messages[:3], msgs[:3])
	}
	if n := f.count(t, `SELECT count(*) FROM contacts WHERE organization_id = ?`, f.orgID); n != int64(created) {
		t.Fatalf("%d contacts stored, want %d", n, created)
	}
	if n := f.count(t, `SELECT COALESCE(sum(n), 0) FROM contact_counts WHERE organization_id = ?`, f.orgID); n != int64(created) {
		t.Fatalf("contact_counts says %d, want %d", n, created)
	}
	var ann models.Contact
	f.DB.Take(&ann, "phone_number = ?", "+15550000000")
	if ann.Name != "Ann\nof three\nlines" || ann.AccountID == nil || ann.AccountID.String() != f.accountID ||
		ann.AssignedTo == nil || ann.AssignedTo.String() != agent.User.ID {
		t.Fatalf("first contact %+v", ann)
	}
	if n := f.count(t, `SELECT count(*) FROM contact_tags ct JOIN tags g ON g.id = ct.tag_id WHERE g.organization_id = ? AND g.name = 'lead'`,
		f.orgID); n != int64(created-1) {
		t.Fatalf("%d contacts tagged lead, want %d", n, created-1)
	}
	if n := f.count(t, `SELECT count(*) FROM tags WHERE organization_id = ?`, f.orgID); n != 5 {
		t.Fatalf("%d tags, want vip, lead, batch0-2", n)
	}
	// The contacts list sees them (its counts are the maintained ones).
	var page struct {
		Total int `json:"total"`
	}
	f.Do("GET", "/api/contacts?limit=1", nil, a).Expect(t, 200).Into(t, &page)
	if page.Total != created {
		t.Fatalf("contacts list total %d", page.Total)
	}
	// An agent may not import.
	if r := f.importCSV(t, agent.Auth(), "contacts", "phone_number\n+15559990000\n", "", false).Expect(t, 403); !strings.Contains(r.Message, "contacts:import") {
		t.Fatalf("agent: %q", r.Message)
	}
}

// The request's checks: each refusal is a 400 (or 403) before anything is
// stored; BOM and ";" and column_mapping; update_on_duplicate both ways;
// tags; the config endpoint.
func TestImportChecksAndOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	jobsStored := func() int64 { return f.count(t, `SELECT count(*) FROM import_jobs`) }

	var big bytes.Buffer
	big.WriteString("phone_number\n")
	for big.Len() <= 10<<20 {
		big.WriteString("+15550001111\n")
	}
	var rows10001 bytes.Buffer
	rows10001.WriteString("phone_number\n")
	for i := 0; i < 10001; i++ {
		fmt.Fprintf(&rows10001, "+1555%07d\n", i)
	}
	for name, tc := range map[string]struct {
		table, file, mapping string
		want                 string
	}{
		"over 10 MB":       {"contacts", big.String(), "", "larger than 10 MB"},
		"10,001 rows":      {"contacts", rows10001.String(), "", "more than 10,000 data rows"},
		"required missing": {"contacts", "Name,Tags\nAnn,vip\n", "", "no column for the required phone_number"},
		"unknown header":   {"contacts", "phone_number\n+15550001111\n", `{"Mobile": "phone_number"}`, `"Mobile" is not a header`},
		"unknown column":   {"contacts", "phone_number,x\n+15550001111,y\n", `{"x": "email"}`, `not a column of contacts`},
		"bad mapping":      {"contacts", "phone_number\n+15550001111\n", `["phone_number"]`, "column_mapping must be a JSON object"},
		"unknown table":    {"users", "phone_number\n+15550001111\n", "", "table must be contacts or tags"},
		"not CSV":          {"tags", "name\n\"open\n", "", "not valid CSV"},
	} {
		if r := f.importCSV(t, a, tc.table, tc.file, tc.mapping, false).Expect(t, 400); !strings.Contains(r.Message, tc.want) {
			t.Errorf("%s: %q, want %q", name, r.Message, tc.want)
		}
	}
	f.Upload("/api/import", map[string]string{"table": "contacts"}, "", "", nil, a).Expect(t, 400)
	if n := jobsStored(); n != 0 {
		t.Fatalf("%d import jobs stored by refused requests", n)
	}
	if n := f.count(t, `SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("%d contacts stored by refused requests", n)
	}

	// BOM, ";" and a mapped header; "Nom" is not ours and is ignored.
	res := f.imported(t, a, "contacts", "\xEF\xBB\xBFMobile;Nom;Name\n+1 555 000 1001;x;Ann\n+15550001002;y;Bob\n", `{"Mobile": "phone_number"}`, false)
	if res.Created != 2 || res.Errors != 0 {
		t.Fatalf("mapped import %+v", res)
	}
	// Without update_on_duplicate an existing number is skipped; with it,
	// the non-empty cells are written.
	res = f.imported(t, a, "contacts", "phone_number,name\n+15550001001,Ann Changed\n", "", false)
	if res.Skipped != 1 || res.Updated != 0 || f.count(t, `SELECT count(*) FROM contacts WHERE name = 'Ann'`) != 1 {
		t.Fatalf("skip: %+v", res)
	}
	res = f.imported(t, a, "contacts", "phone_number,name,tags\n+15550001001,Ann Changed,\n+15550001002,,\"x,y\"\n", "", true)
	if res.Updated != 2 || f.count(t, `SELECT count(*) FROM contacts WHERE name = 'Ann Changed'`) != 1 ||
		f.count(t, `SELECT count(*) FROM contacts WHERE name = 'Bob'`) != 1 {
		t.Fatalf("update: %+v", res)
	}

	// Tags.
	res = f.imported(t, a, "tags", "name,color,description\nGold,yellow,Big spenders\nx,purple,\nbad,pink,\n", "", true)
	if res.Created != 1 || res.Updated != 1 || res.Errors != 1 || res.Messages[0] != `row 4: color: "pink" is not one of blue, red, green, yellow, purple, gray` {
		t.Fatalf("tags %+v", res)
	}
	var gold models.Tag
	f.DB.Take(&gold, "name = 'Gold'")
	if gold.Color != "yellow" || gold.Description != "Big spenders" {
		t.Fatalf("tag %+v", gold)
	}

	var cfg struct {
		Table           string   `json:"table"`
		RequiredColumns []string `json:"required_columns"`
		OptionalColumns []string `json:"optional_columns"`
		UniqueColumn    string   `json:"unique_column"`
	}
	f.Do("GET", "/api/import/contacts/config", nil, a).Expect(t, 200).Into(t, &cfg)
	if cfg.Table != "contacts" || strings.Join(cfg.RequiredColumns, ",") != "phone_number" ||
		strings.Join(cfg.OptionalColumns, ",") != "profile_name,tags,platform_account,assigned_user_id" || cfg.UniqueColumn != "phone_number" {
		t.Fatalf("config %+v", cfg)
	}
	f.Do("GET", "/api/import/tags/config", nil, a).Expect(t, 200).Into(t, &cfg)
	if strings.Join(cfg.RequiredColumns, ",") != "name" || cfg.UniqueColumn != "name" {
		t.Fatalf("tags config %+v", cfg)
	}
	agent := f.CreateUser(a, "agent-import@example.test", "Agent")
	f.Do("GET", "/api/import/contacts/config", nil, agent.Auth()).Expect(t, 403)
	f.Do("GET", "/api/import/bogus/config", nil, a).Expect(t, 400)
}

// An import that outlasts the wait answers 202 with its progress endpoint,
// which shows it queued, then done with the result; a second run of the
// same job (a retry, a duplicate delivery) counts nothing twice.
func TestImportAnswers202AndProgress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{"IMPORT_WAIT": "200ms"}, nil)
	a := f.admin.Auth()
	var queued struct {
		JobID       string `json:"job_id"`
		Status      string `json:"status"`
		ProgressURL string `json:"progress_url"`
	}
	// No worker yet: the wait runs out.
	f.importCSV(t, a, "contacts", "phone_number,tags\n+15550002001,a\n+15550002002,b\nbad,\n", "", false).Expect(t, 202).Into(t, &queued)
	if queued.Status != "queued" || queued.ProgressURL != "/api/import/jobs/"+queued.JobID {
		t.Fatalf("202 %+v", queued)
	}
	type progress struct {
		Status        string        `json:"status"`
		TotalRows     int           `json:"total_rows"`
		ProcessedRows int           `json:"processed_rows"`
		Result        *importResult `json:"result"`
	}
	var p progress
	f.Do("GET", queued.ProgressURL, nil, a).Expect(t, 200).Into(t, &p)
	if p.Status != "queued" || p.TotalRows != 3 || p.Result != nil {
		t.Fatalf("progress %+v", p)
	}
	agent := f.CreateUser(a, "agent-progress@example.test", "Agent")
	f.Do("GET", queued.ProgressURL, nil, agent.Auth()).Expect(t, 403)
	f.Do("GET", "/api/import/jobs/"+uuid.NewString(), nil, a).Expect(t, 404)

	f.StartWorker()
	apptest.Eventually(t, 20*time.Second, "import done", func() bool {
		f.Do("GET", queued.ProgressURL, nil, a).Expect(t, 200).Into(t, &p)
		return p.Status == "done"
	})
	if p.Result == nil || p.Result.Created != 2 || p.Result.Errors != 1 || p.ProcessedRows != 3 ||
		p.Result.Messages[0] != `row 4: phone_number: "bad" is not a phone number` {
		t.Fatalf("done %+v %+v", p, p.Result)
	}

	// The same job delivered again (another task id, as a retry after a
	// lost acknowledgement would be) returns the stored result.
	jobID := uuid.MustParse(queued.JobID)
	client := asynq.NewClientFromRedisClient(f.Redis)
	t.Cleanup(func() { _ = client.Close() })
	enq := jobs.NewEnqueuer(client, f.Inspector())
	_, result, done, err := enq.EnqueueAndWait(context.Background(), jobs.Import{OrganizationID: uuid.MustParse(f.orgID), ImportID: jobID},
		20*time.Second, asynq.TaskID("again-"+queued.JobID))
	if err != nil || !done {
		t.Fatalf("second run: done %v, %v", done, err)
	}
	var again importResult
	if err := json.Unmarshal(result, &again); err != nil || again.Created != 2 || again.Errors != 1 {
		t.Fatalf("second run's result %s (%v)", result, err)
	}
	if n := f.count(t, `SELECT count(*) FROM contacts`); n != 2 {
		t.Fatalf("%d contacts after a second run", n)
	}
	if n := f.count(t, `SELECT COALESCE(sum(n), 0) FROM contact_counts`); n != 2 {
		t.Fatalf("contact_counts says %d after a second run", n)
	}
}

// An import's progress endpoint echoes the file's values (numbers, names in
// its messages) to the uploader only: a manager of the organization, who
// may import too, sees the same messages without them.
func TestImportProgressShowsTheFilesValuesToItsUploaderOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	manager := f.CreateUser(a, "manager-import@example.test", "Manager")
	res := f.imported(t, a, "contacts", "phone_number,name\n+15550003001,Ann\n555-CALL-NOW,Bad\n+15550003001,Ann twice\n", "", false)
	if res.Created != 1 || strings.Join(res.Messages, "|") !=
		`row 3: phone_number: "555-CALL-NOW" is not a phone number|row 4: phone_number: +15550003001 repeats row 2; skipped` {
		t.Fatalf("the uploader's answer %+v", res)
	}
	var jobID string
	if err := f.DB.Raw(`SELECT id FROM import_jobs WHERE organization_id = ?`, f.orgID).Scan(&jobID).Error; err != nil || jobID == "" {
		t.Fatalf("job: %v", err)
	}
	type progress struct {
		Result *importResult `json:"result"`
	}
	var p progress
	f.Do("GET", "/api/import/jobs/"+jobID, nil, a).Expect(t, 200).Into(t, &p)
	if strings.Join(p.Result.Messages, "|") != strings.Join(res.Messages, "|") {
		t.Fatalf("the uploader's progress %q", p.Result.Messages)
	}
	var other progress
	r := f.Do("GET", "/api/import/jobs/"+jobID, nil, manager.Auth()).Expect(t, 200)
	r.Into(t, &other)
	if strings.Join(other.Result.Messages, "|") != "row 3: phone_number: not a phone number|row 4: phone_number: repeats row 2; skipped" ||
		strings.Contains(string(r.Body), "CALL-NOW") || strings.Contains(string(r.Body), "5550003001") {
		t.Fatalf("a manager's progress %s", r.Body)
	}
	agent := f.CreateUser(a, "agent-import-values@example.test", "Agent")
	f.Do("GET", "/api/import/jobs/"+jobID, nil, agent.Auth()).Expect(t, 403)
}

// An import file is bounded in width: a row of more than 200 columns or a
// line over 64 KB is a 400 naming the line and the limit, and nothing is
// stored.
func TestImportRefusesWideFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	for name, tc := range map[string]struct{ file, want string }{
		"201 columns": {"phone_number,name\n+15550004001,Ann\n+15550004002" + strings.Repeat(",x", 200) + "\n",
			"line 3 has more than 200 columns: a row may have at most 200"},
		"a line over 64 KB": {"phone_number,name\n+15550004001," + strings.Repeat("n", 64<<10) + "\n+15550004002,Bob\n",
			"line 2 is longer than 64 KB: a line may have at most 65536 bytes"},
		"10 MB of commas": {"phone_number\n" + strings.Repeat(",", 10<<20-20), "line 2 has more than 200 columns"},
	} {
		if r := f.importCSV(t, a, "contacts", tc.file, "", false).Expect(t, 400); !strings.Contains(r.Message, tc.want) {
			t.Errorf("%s: %q, want %q", name, r.Message, tc.want)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM import_jobs`) + f.count(t, `SELECT count(*) FROM contacts`); n != 0 {
		t.Fatalf("%d jobs and contacts stored by refused imports", n)
	}
	// 200 columns are fine.
	if res := f.imported(t, a, "contacts", "phone_number"+strings.Repeat(",x", 199)+"\n+15550004003\n", "", false); res.Created != 1 {
		t.Fatalf("200 columns: %+v", res)
	}
}

type importJobOut struct {
	JobID     string `json:"job_id"`
	Table     string `json:"table"`
	Status    string `json:"status"`
	Mine      bool   `json:"mine"`
	TotalRows int    `json:"total_rows"`
	Created   *int   `json:"created"`
	Errors    *int   `json:"errors"`
}

type importJobsOut struct {
	Items []importJobOut `json:"items"`
	Total int64          `json:"total"`
	Page  int            `json:"page"`
	Limit int            `json:"limit"`
}

// GET /api/import/jobs lists the organization's imports newest first, by
// the progress endpoint's rules: the caller's own and those of the tables
// it may import, with counts but no message (so no value of anyone's
// file); paged; a user who may import nothing is refused, and another
// organization's imports never show.
func TestImportJobsList(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	f.imported(t, a, "contacts", "phone_number,name\n+15550005001,Ann\nSECRET-VALUE,Bad\n", "", false)
	f.imported(t, a, "tags", "name\nvip\n", "", false)
	f.imported(t, a, "contacts", "phone_number\n+15550005002\n", "", false)

	list := func(auth apptest.Auth, query string, status int) importJobsOut {
		t.Helper()
		var out importJobsOut
		r := f.Do("GET", "/api/import/jobs"+query, nil, auth).Expect(t, status)
		if status == 200 {
			r.Into(t, &out)
			if strings.Contains(string(r.Body), "SECRET-VALUE") || strings.Contains(string(r.Body), "messages") {
				t.Fatalf("the list shows the files' messages: %s", r.Body)
			}
		}
		return out
	}
	all := list(a, "", 200)
	if all.Total != 3 || len(all.Items) != 3 || all.Items[0].TotalRows != 1 || all.Items[1].Table != "tags" || all.Items[2].TotalRows != 2 {
		t.Fatalf("the admin's list %+v", all)
	}
	first := all.Items[2]
	if !first.Mine || first.Status != "done" || first.Created == nil || *first.Created != 1 || first.Errors == nil || *first.Errors != 1 {
		t.Fatalf("the first import %+v", first)
	}
	if p := list(a, "?limit=2&page=2", 200); p.Total != 3 || len(p.Items) != 1 || p.Items[0].JobID != first.JobID || p.Limit != 2 {
		t.Fatalf("page 2 of 2 %+v", p)
	}
	if c := list(a, "?table=contacts", 200); c.Total != 2 {
		t.Fatalf("contacts only %+v", c)
	}
	list(a, "?table=users", 400)
	list(a, "?limit=0", 400)

	// A manager may import both tables: it sees every import, none as its own.
	manager := f.CreateUser(a, "manager-jobs@example.test", "Manager")
	if m := list(manager.Auth(), "", 200); m.Total != 3 || m.Items[0].Mine {
		t.Fatalf("the manager's list %+v", m)
	}
	// A role that may import tags only sees the tags import, and its own.
	f.Do("POST", "/api/roles", map[string]any{"name": "Tag importer", "permissions": []string{"tags:import"}}, a).Expect(t, 201)
	tagger := f.CreateUser(a, "tagger@example.test", "Tag importer")
	if tg := list(tagger.Auth(), "", 200); tg.Total != 1 || tg.Items[0].Table != "tags" {
		t.Fatalf("the tag importer's list %+v", tg)
	}
	list(tagger.Auth(), "?table=contacts", 403)
	// An agent imports nothing.
	agent := f.CreateUser(a, "agent-jobs@example.test", "Agent")
	list(agent.Auth(), "", 403)

	// Another organization has none of these.
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, a).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, a).Expect(t, 200).Into(t, &inB)
	if b := list(inB.Auth(), "", 200); b.Total != 0 || len(b.Items) != 0 {
		t.Fatalf("another organization's list %+v", b)
	}
	f.Do("GET", "/api/import/jobs/"+first.JobID, nil, inB.Auth()).Expect(t, 404)
}
