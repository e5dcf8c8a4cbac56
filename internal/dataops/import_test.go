package dataops_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/contacts"
	"wharf/internal/dataops"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/models"
)

type importBundle struct {
	f   *testfactory.Factory
	org *testfactory.Org
	s   *dataops.Service
}

func setupImport(t *testing.T) *importBundle {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	wh := webhooks.NewService(f.DB, f.Box, nil, safehttp.Policy{}, nil, testenv.Quiet())
	s := dataops.NewService(dataops.Deps{DB: f.DB, Maskers: orgsettings.NewService(f.DB, f.Box, nil, nil),
		Contacts: contacts.NewService(f.DB, wh, nil, nil), Members: identity.NewService(f.DB, nil, nil, testenv.Quiet()), Log: testenv.Quiet()})
	return &importBundle{f: f, org: f.Org(), s: s}
}

// stage stores an import as the api does after its checks, and returns its id.
func (b *importBundle) stage(t *testing.T, orgID uuid.UUID, table, file string, mapping map[string]string, update bool) uuid.UUID {
	t.Helper()
	rows, err := dataops.CheckImport(dataops.ImportRequest{Table: table, File: []byte(file), ColumnMapping: mapping})
	if err != nil {
		t.Fatal(err)
	}
	if mapping == nil {
		mapping = map[string]string{}
	}
	job := models.ImportJob{ID: uuid.New(), OrganizationID: orgID, Table: table, File: []byte(file), Status: models.ImportQueued,
		ColumnMapping: models.JSON[map[string]string]{V: mapping}, UpdateOnDuplicate: update, TotalRows: rows}
	if err := b.f.DB.Create(&job).Error; err != nil {
		t.Fatal(err)
	}
	return job.ID
}

func (b *importBundle) run(t *testing.T, orgID uuid.UUID, table, file string, mapping map[string]string, update bool) *dataops.ImportResult {
	t.Helper()
	id := b.stage(t, orgID, table, file, mapping, update)
	res, err := b.s.RunImport(context.Background(), orgID, id, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (b *importBundle) contactCount(t *testing.T, orgID uuid.UUID) int64 {
	t.Helper()
	var n int64
	if err := b.f.DB.Raw(`SELECT COALESCE(sum(n), 0) FROM contact_counts WHERE organization_id = ?`, orgID).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func wantResult(t *testing.T, got *dataops.ImportResult, created, updated, skipped, errors int, msgs ...string) {
	t.Helper()
	if got.Created != created || got.Updated != updated || got.Skipped != skipped || got.Errors != errors {
		t.Fatalf("result %+v, want created %d updated %d skipped %d errors %d", got, created, updated, skipped, errors)
	}
	if strings.Join(got.Messages, "\n") != strings.Join(msgs, "\n") {
		t.Fatalf("messages:\n%s\nwant:\n%s", strings.Join(got.Messages, "\n"), strings.Join(msgs, "\n"))
	}
}

// Each row is checked on its own: bad rows are reported with their row and
// column and not written, the others are; the file's duplicates are
// skipped; accounts and users must be the organization's; the maintained
// count follows.
func TestImportContactsRowByRow(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	other := b.f.Org()
	acc := b.f.Account(b.org.ID, func(a *models.PlatformAccount) { a.Name = "Main" })
	foreign := b.f.Account(other.ID, func(a *models.PlatformAccount) { a.Name = "Theirs" })
	_ = foreign
	member := b.f.User(b.org, "Agent")
	outsider := b.f.User(other, "Agent")
	file := "Phone Number,Name,Tags,platform_account,assigned_user_id\n" +
		"+1 555 010 0001,Ann,\"vip, Lead\",main," + member.ID.String() + "\n" + // row 2
		"abc,Bad,,,\n" + // row 3
		"+15550100002,Bob,,Theirs,\n" + // row 4
		"+15550100003,Cy,,,not-a-uuid\n" + // row 5
		"+15550100004,Di,,," + outsider.ID.String() + "\n" + // row 6
		",NoPhone,,,\n" + // row 7
		"+15550100005,\"Eve\nSecond line\",VIP,,\n" + // row 8 (two lines)
		"0015550100001,Ann again,,,\n" + // row 9: row 2's number
		"+15550100006,Fay," + strings.Repeat("x", 51) + ",,\n" // row 10
	res := b.run(t, b.org.ID, "contacts", file, nil, false)
	wantResult(t, res, 2, 0, 1, 6,
		`row 3: phone_number: "abc" is not a phone number`,
		`row 4: platform_account: "Theirs" is not an account of this organization`,
		`row 5: assigned_user_id: "not-a-uuid" is not a UUID`,
		`row 6: assigned_user_id: `+outsider.ID.String()+` is not a member of this organization`,
		`row 7: phone_number: missing`,
		`row 9: phone_number: +15550100001 repeats row 2; skipped`,
		`row 10: tags: "`+strings.Repeat("x", 51)+`" is longer than 50 characters`,
	)
	var ann models.Contact
	if err := b.f.DB.Take(&ann, "organization_id = ? AND phone_number = ?", b.org.ID, "+15550100001").Error; err != nil {
		t.Fatal(err)
	}
	if ann.Name != "Ann" || ann.AccountID == nil || *ann.AccountID != acc.ID || ann.AssignedTo == nil || *ann.AssignedTo != member.ID {
		t.Fatalf("Ann %+v", ann)
	}
	if got := b.tagsOf(t, ann.ID); got != "Lead,vip" {
		t.Fatalf("Ann's tags %q", got)
	}
	if n := b.f.Count("tags", "organization_id = ?", b.org.ID); n != 2 {
		t.Fatalf("%d tags, want vip and Lead (VIP is vip)", n)
	}
	if n := b.f.Count("contacts", "organization_id = ? AND name = ?", b.org.ID, "Eve\nSecond line"); n != 1 {
		t.Fatalf("Eve's two-line name: %d", n)
	}
	if n := b.contactCount(t, b.org.ID); n != 2 {
		t.Fatalf("contact_counts says %d, want 2", n)
	}
	if n := b.f.Count("contacts", "organization_id = ?", other.ID); n != 0 {
		t.Fatalf("the other organization got %d contacts", n)
	}
}

// An import's progress shows the file's values (in its messages) to its
// uploader only: another user of the organization with the import
// permission sees the same messages without them, one without the
// permission gets 403, another organization 404. Results stored before
// messages were kept redacted show others only the rows.
func TestImportJobShowsTheFilesValuesToItsUploaderOnly(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	other := b.f.Org()
	b.f.Account(other.ID, func(a *models.PlatformAccount) { a.Name = "Theirs" })
	uploader, colleague := b.f.User(b.org, "Admin"), b.f.User(b.org, "Admin")
	outsider := b.f.User(other, "Agent")
	long := strings.Repeat("x", 51)
	staged := func(table, file string) uuid.UUID {
		id := b.stage(t, b.org.ID, table, file, nil, false)
		if err := b.f.DB.Model(&models.ImportJob{}).Where("id = ?", id).Update("user_id", uploader.ID).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := b.s.RunImport(context.Background(), b.org.ID, id, io.Discard); err != nil {
			t.Fatal(err)
		}
		return id
	}
	view := func(id uuid.UUID, user uuid.UUID, mayImport bool) (*dataops.ImportJob, error) {
		return b.s.ImportJobFor(context.Background(), dataops.ImportViewer{OrgID: b.org.ID, UserID: user,
			MayImport: func(string) bool { return mayImport }}, id)
	}
	messages := func(id uuid.UUID, user uuid.UUID, mayImport bool) string {
		t.Helper()
		job, err := view(id, user, mayImport)
		if err != nil {
			t.Fatal(err)
		}
		if user != uploader.ID && job.Result.RedactedMessages != nil {
			t.Fatal("the redacted messages are answered besides the messages")
		}
		return strings.Join(job.Result.Messages, "\n")
	}

	contactsID := staged("contacts", "phone_number,name,tags,platform_account,assigned_user_id\n"+
		"+15550100001,Ann,,,\n"+ // row 2
		"abc555,Bad,,,\n"+ // row 3
		"+15550100002,Bob,,Theirs,\n"+ // row 4
		"+15550100003,Cy,,,not-a-uuid\n"+ // row 5
		"+15550100004,Di,,,"+outsider.ID.String()+"\n"+ // row 6
		",NoPhone,,,\n"+ // row 7
		"+15550100001,Ann again,,,\n"+ // row 8: row 2's number
		"+15550100006,Fay,"+long+",,\n") // row 9
	full := strings.Join([]string{
		`row 3: phone_number: "abc555" is not a phone number`,
		`row 4: platform_account: "Theirs" is not an account of this organization`,
		`row 5: assigned_user_id: "not-a-uuid" is not a UUID`,
		`row 6: assigned_user_id: ` + outsider.ID.String() + ` is not a member of this organization`,
		`row 7: phone_number: missing`,
		`row 8: phone_number: +15550100001 repeats row 2; skipped`,
		`row 9: tags: "` + long + `" is longer than 50 characters`,
	}, "\n")
	redacted := strings.Join([]string{
		`row 3: phone_number: not a phone number`,
		`row 4: platform_account: not an account of this organization`,
		`row 5: assigned_user_id: not a UUID`,
		`row 6: assigned_user_id: not a member of this organization`,
		`row 7: phone_number: missing`,
		`row 8: phone_number: repeats row 2; skipped`,
		`row 9: tags: a tag is longer than 50 characters`,
	}, "\n")
	if got := messages(contactsID, uploader.ID, true); got != full {
		t.Fatalf("the uploader sees:\n%s\nwant:\n%s", got, full)
	}
	if got := messages(contactsID, uploader.ID, false); got != full {
		t.Fatalf("the uploader without the permission sees:\n%s", got)
	}
	if got := messages(contactsID, colleague.ID, true); got != redacted {
		t.Fatalf("a colleague sees:\n%s\nwant:\n%s", got, redacted)
	}
	if _, err := view(contactsID, colleague.ID, false); !apperr.Is(err, apperr.Forbidden) {
		t.Fatalf("a colleague without the permission: %v, want 403", err)
	}
	if _, err := b.s.ImportJobFor(context.Background(), dataops.ImportViewer{OrgID: other.ID, UserID: outsider.ID,
		MayImport: func(string) bool { return true }}, contactsID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("another organization: %v, want 404", err)
	}

	tagsID := staged("tags", "name,color\n"+long+",pink\nGold,\ngold,red\n")
	if got, want := messages(tagsID, colleague.ID, true),
		"row 2: name: longer than 50 characters; color: not one of blue, red, green, yellow, purple, gray\n"+
			"row 4: name: repeats row 3; skipped"; got != want {
		t.Fatalf("a colleague sees:\n%s\nwant:\n%s", got, want)
	}
	if got := messages(tagsID, uploader.ID, true); !strings.Contains(got, `"pink"`) || !strings.Contains(got, `"gold" repeats row 3`) {
		t.Fatalf("the uploader sees:\n%s", got)
	}

	// A result stored before redacted messages were kept.
	if err := b.f.DB.Exec(`UPDATE import_jobs SET result = result - 'redacted_messages' WHERE id = ?`, contactsID).Error; err != nil {
		t.Fatal(err)
	}
	if got := messages(contactsID, colleague.ID, true); !strings.HasPrefix(got, "row 3: the details are shown to the uploader only\n") ||
		strings.Contains(got, "abc555") || strings.Count(got, "\n") != 6 {
		t.Fatalf("a colleague sees an older result as:\n%s", got)
	}
}

func (b *importBundle) tagsOf(t *testing.T, contactID uuid.UUID) string {
	t.Helper()
	var names []string
	if err := b.f.DB.Raw(`SELECT g.name FROM contact_tags ct JOIN tags g ON g.id = ct.tag_id WHERE ct.contact_id = ? ORDER BY lower(g.name)`,
		contactID).Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	return strings.Join(names, ",")
}

// An existing contact is skipped unless update_on_duplicate; updating sets
// only the row's non-empty cells, and a tags cell replaces the tags.
func TestImportContactsUpdateOnDuplicate(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	acc := b.f.Account(b.org.ID)
	c := b.f.Contact(b.org.ID, &acc.ID, func(c *models.Contact) { c.PhoneNumber, c.Name = "+15550100001", "Old name" })
	b.run(t, b.org.ID, "tags", "name\nold\n", nil, false)
	if err := b.f.DB.Exec(`INSERT INTO contact_tags (contact_id, tag_id) SELECT ?, id FROM tags WHERE organization_id = ?`, c.ID, b.org.ID).Error; err != nil {
		t.Fatal(err)
	}
	file := "phone_number,name,tags\n+15550100001,New name,\n+15550100002,Fresh,\n"
	wantResult(t, b.run(t, b.org.ID, "contacts", file, nil, false), 1, 0, 1, 0)
	var got models.Contact
	b.f.DB.Take(&got, "id = ?", c.ID)
	if got.Name != "Old name" {
		t.Fatalf("skipped contact changed: %q", got.Name)
	}
	// Row 2 changes the name, keeps the tags and the account; row 3 has
	// nothing to change (skipped); row 4 replaces the tags.
	file = "phone_number,name,tags\n+15550100001,New name,\n+15550100002,,\n+15550100003,Third,\n"
	wantResult(t, b.run(t, b.org.ID, "contacts", file, nil, true), 1, 1, 1, 0)
	b.f.DB.Take(&got, "id = ?", c.ID)
	if got.Name != "New name" || got.AccountID == nil || *got.AccountID != acc.ID || b.tagsOf(t, c.ID) != "old" {
		t.Fatalf("updated contact %+v tags %q", got, b.tagsOf(t, c.ID))
	}
	wantResult(t, b.run(t, b.org.ID, "contacts", "phone_number,tags\n+15550100001,\"new, other\"\n", nil, true), 0, 1, 0, 0)
	if tags := b.tagsOf(t, c.ID); tags != "new,other" {
		t.Fatalf("tags after update %q", tags)
	}
	if n := b.contactCount(t, b.org.ID); n != 3 {
		t.Fatalf("contact_counts says %d, want 3", n)
	}
}

// A retried or repeated run of one import returns the stored result and
// writes nothing more; the file's bytes are gone once it is done.
func TestImportRunTwiceCountsOnce(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	var file bytes.Buffer
	file.WriteString("phone_number\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&file, "+1555020%04d\n", i)
	}
	id := b.stage(t, b.org.ID, "contacts", file.String(), nil, true)
	var out bytes.Buffer
	first, err := b.s.RunImport(context.Background(), b.org.ID, id, &out)
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, first, 3000, 0, 0, 0)
	again, err := b.s.RunImport(context.Background(), b.org.ID, id, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, again, 3000, 0, 0, 0)
	if n := b.contactCount(t, b.org.ID); n != 3000 {
		t.Fatalf("contact_counts says %d", n)
	}
	job, err := b.s.ImportJobOf(context.Background(), b.org.ID, id)
	if err != nil || job.Status != models.ImportDone || job.ProcessedRows != 3000 || job.FinishedAt == nil {
		t.Fatalf("job %+v, %v", job, err)
	}
	if n := b.f.Count("import_jobs", "id = ? AND file IS NULL", id); n != 1 {
		t.Fatal("the file's bytes are still stored")
	}
	// The task's result ends with the final result, after the progress.
	var last dataops.ImportResult
	all := out.String()
	if err := json.Unmarshal([]byte(all[strings.LastIndex(all, `{"created"`):]), &last); err != nil || last.Created != 3000 {
		t.Fatalf("result written %q", all)
	}
	// Another organization cannot see or run it.
	other := b.f.Org()
	if _, err := b.s.ImportJobOf(context.Background(), other.ID, id); err == nil {
		t.Fatal("another organization reads the import")
	}
	if _, err := b.s.RunImport(context.Background(), other.ID, id, io.Discard); err == nil {
		t.Fatal("another organization runs the import")
	}
}

// Tags: name required, color in the list, unique by lower-cased name.
func TestImportTags(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	b.run(t, b.org.ID, "tags", "name,color\nVIP,red\n", nil, false)
	file := "Name;Color;Description\nvip;blue;Top customers\nlead;;New ones\n;red;\nspam;pink;\nLEAD;green;\n"
	wantResult(t, b.run(t, b.org.ID, "tags", file, nil, false), 1, 0, 2, 2,
		`row 4: name: missing`,
		`row 5: color: "pink" is not one of blue, red, green, yellow, purple, gray`,
		`row 6: name: "LEAD" repeats row 3; skipped`)
	var tags []models.Tag
	b.f.DB.Where("organization_id = ?", b.org.ID).Order("lower(name)").Find(&tags)
	if len(tags) != 2 || tags[0].Name != "lead" || tags[0].Color != "gray" || tags[0].Description != "New ones" ||
		tags[1].Name != "VIP" || tags[1].Color != "red" {
		t.Fatalf("tags %+v", tags)
	}
	wantResult(t, b.run(t, b.org.ID, "tags", "name,color,description\nvip,blue,\n", nil, true), 0, 1, 0, 0)
	b.f.DB.Where("organization_id = ? AND name = 'VIP'", b.org.ID).Take(&tags[1])
	if tags[1].Color != "blue" {
		t.Fatalf("updated tag %+v", tags[1])
	}
}

// At most 1,000 messages, then one that counts the rest; errors counts all.
func TestImportMessagesAreCapped(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	var file bytes.Buffer
	file.WriteString("phone_number\n")
	for i := 0; i < 2500; i++ {
		file.WriteString("bad\n")
	}
	res := b.run(t, b.org.ID, "contacts", file.String(), nil, false)
	if res.Errors != 2500 || len(res.Messages) != 1001 || res.Messages[1000] != "... and 1500 more" ||
		res.Messages[999] != `row 1001: phone_number: "bad" is not a phone number` {
		t.Fatalf("errors %d, %d messages, last %q", res.Errors, len(res.Messages), res.Messages[len(res.Messages)-1])
	}
}

// Imports past their retention are deleted by the hourly purge, the
// others kept.
func TestPurgeImports(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	old := b.stage(t, b.org.ID, "contacts", "phone_number\n+15550001000\n", nil, false)
	recent := b.stage(t, b.org.ID, "contacts", "phone_number\n+15550001001\n", nil, false)
	if err := b.f.DB.Exec(`UPDATE import_jobs SET created_at = now() - interval '8 days' WHERE id = ?`, old).Error; err != nil {
		t.Fatal(err)
	}
	n, err := b.s.PurgeImports(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("purge: %d %v, want 1", n, err)
	}
	var left []uuid.UUID
	b.f.DB.Raw(`SELECT id FROM import_jobs WHERE organization_id = ?`, b.org.ID).Scan(&left)
	if len(left) != 1 || left[0] != recent {
		t.Fatalf("left %v, want only %s", left, recent)
	}
}

// An import that creates many contacts leaves the contacts analyzed and
// the trigram index's pending list merged (issue 21): searches right after
// it are planned on the table's real size and read no pending rows.
func TestBigImportRefreshesContactStatistics(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	var file strings.Builder
	file.WriteString("phone_number,name\n")
	for i := 0; i < 6000; i++ {
		fmt.Fprintf(&file, "+1555%07d,Big %d\n", i, i)
	}
	wantResult(t, b.run(t, b.org.ID, "contacts", file.String(), nil, false), 6000, 0, 0, 0)
	var rows float64
	if err := b.f.DB.Raw(`SELECT reltuples FROM pg_class WHERE oid = 'contacts'::regclass`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if rows < 6000 {
		t.Fatalf("contacts not analyzed after the import: reltuples %v", rows)
	}
	var pending int
	if err := b.f.DB.Raw(`SELECT gin_clean_pending_list('contacts_search'::regclass)`).Scan(&pending).Error; err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("%d pending pages left in the trigram index", pending)
	}
}

// A contacts file is checked a stretch of 2,500 rows at a time (the
// numbers of a stretch on every core, then its rows in order): a number
// that repeats a row of an earlier stretch is skipped, a tag takes its
// first spelling in the file whichever stretch has it, an existing contact
// is updated whichever stretch has its row, and every row is counted and
// linked to its tags.
func TestImportContactsAcrossChunks(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	existing := b.f.Contact(b.org.ID, nil, func(c *models.Contact) { c.PhoneNumber = "+15550305000" }) // row 5002, chunk 3
	var file strings.Builder
	file.WriteString("phone_number,name,tags\n")
	for i := 0; i < 6000; i++ {
		tags := "all"
		switch i {
		case 100:
			tags = "all, Gold" // the first Gold
		case 2600:
			tags = "GOLD, Silver" // chunk 2: Gold is known, Silver is new
		case 5100:
			tags = "silver, bronze, BRONZE" // chunk 3: later spellings; bronze comes first in its cell
		}
		fmt.Fprintf(&file, "+1555030%04d,C%d,\"%s\"\n", i, i, tags)
	}
	fmt.Fprintf(&file, "+15550300001,Again,\n") // row 6002: row 3's number, in the last chunk
	res := b.run(t, b.org.ID, "contacts", file.String(), nil, true)
	wantResult(t, res, 5999, 1, 1, 0, `row 6002: phone_number: +15550300001 repeats row 3; skipped`)
	var names []string
	if err := b.f.DB.Raw(`SELECT name FROM tags WHERE organization_id = ? ORDER BY lower(name)`, b.org.ID).Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "all,bronze,Gold,Silver" {
		t.Fatalf("tags %q, want all,bronze,Gold,Silver (their first spellings)", got)
	}
	var c models.Contact
	if err := b.f.DB.Take(&c, "organization_id = ? AND phone_number = ?", b.org.ID, "+15550302600").Error; err != nil {
		t.Fatal(err)
	}
	if got := b.tagsOf(t, c.ID); got != "Gold,Silver" {
		t.Fatalf("row 2602's tags %q", got)
	}
	var updated models.Contact
	if err := b.f.DB.Take(&updated, "id = ?", existing.ID).Error; err != nil || updated.Name != "C5000" || b.tagsOf(t, existing.ID) != "all" {
		t.Fatalf("existing contact %+v (tags %q), %v", updated, b.tagsOf(t, existing.ID), err)
	}
	if n := b.f.Count("contact_tags", "contact_id IN (SELECT id FROM contacts WHERE organization_id = ?)", b.org.ID); n != 6000+3 {
		t.Fatalf("%d contact tags, want 6,003", n)
	}
	if n := b.contactCount(t, b.org.ID); n != 6000 {
		t.Fatalf("contact_counts says %d, want 6,000", n)
	}
}

// Every row's number is judged by its own cell, across the stretches the
// numbers are parsed in (2,500 rows, each on every core): a missing or bad
// number is reported with its row and value at the start, the middle and
// the end of a stretch, and the next row's number is still its own.
func TestImportNumbersAreTheirRowsAcrossStretches(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	bad := map[int]string{0: "", 1: "+1555031", 1249: "not-1249", 2499: "not-2499", 2500: "", 2501: "not-2501", 5000: "not-5000"}
	var file strings.Builder
	file.WriteString("phone_number,name\n")
	for i := 0; i <= 5000; i++ {
		n, ok := bad[i]
		if !ok {
			n = fmt.Sprintf("+1555031%04d", i)
		}
		fmt.Fprintf(&file, "%s,C%d\n", n, i)
	}
	res := b.run(t, b.org.ID, "contacts", file.String(), nil, false)
	wantResult(t, res, 5001-len(bad), 0, 0, len(bad),
		`row 2: phone_number: missing`,
		`row 3: phone_number: "+1555031" is not a phone number`,
		`row 1251: phone_number: "not-1249" is not a phone number`,
		`row 2501: phone_number: "not-2499" is not a phone number`,
		`row 2502: phone_number: missing`,
		`row 2503: phone_number: "not-2501" is not a phone number`,
		`row 5002: phone_number: "not-5000" is not a phone number`)
	for _, i := range []int{2, 1248, 1250, 2498, 2502, 4999} {
		var name string
		if err := b.f.DB.Raw(`SELECT name FROM contacts WHERE organization_id = ? AND phone_number = ?`, b.org.ID,
			fmt.Sprintf("+1555031%04d", i)).Scan(&name).Error; err != nil || name != fmt.Sprintf("C%d", i) {
			t.Fatalf("row %d's contact named %q, %v", i+2, name, err)
		}
	}
}

// A row that fails in the merge (here a trigger refuses one number of the
// last chunk; a deleted account or user would do the same) fails the whole
// import: the chunks written before it are rolled back with it, nothing is
// counted, and the import stays to be retried, which then writes it all.
func TestImportFailingInALaterChunkWritesNothing(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	if err := b.f.DB.Exec(`CREATE FUNCTION refuse_number() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.phone_number = '+15550405500' THEN RAISE EXCEPTION 'refused in the merge'; END IF;
			RETURN NEW;
		END $$`).Error; err != nil {
		t.Fatal(err)
	}
	if err := b.f.DB.Exec(`CREATE TRIGGER refuse_number BEFORE INSERT ON contacts FOR EACH ROW EXECUTE FUNCTION refuse_number()`).Error; err != nil {
		t.Fatal(err)
	}
	var file strings.Builder
	file.WriteString("phone_number,tags\n")
	for i := 0; i < 6000; i++ {
		fmt.Fprintf(&file, "+1555040%04d,t%d\n", i, i%3)
	}
	id := b.stage(t, b.org.ID, "contacts", file.String(), nil, false)
	if _, err := b.s.RunImport(context.Background(), b.org.ID, id, io.Discard); err == nil || !strings.Contains(err.Error(), "refused in the merge") {
		t.Fatalf("run: %v, want the merge's error", err)
	}
	if n := b.f.Count("contacts", "organization_id = ?", b.org.ID); n != 0 {
		t.Fatalf("%d contacts written by a failed import", n)
	}
	if n := b.f.Count("tags", "organization_id = ?", b.org.ID); n != 0 {
		t.Fatalf("%d tags written by a failed import", n)
	}
	if n := b.contactCount(t, b.org.ID); n != 0 {
		t.Fatalf("contact_counts says %d after a failed import", n)
	}
	job, err := b.s.ImportJobOf(context.Background(), b.org.ID, id)
	if err != nil || job.Status != models.ImportRunning || job.Result != nil {
		t.Fatalf("job %+v, %v", job, err)
	}
	if err := b.f.DB.Exec(`DROP TRIGGER refuse_number ON contacts`).Error; err != nil {
		t.Fatal(err)
	}
	res, err := b.s.RunImport(context.Background(), b.org.ID, id, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	wantResult(t, res, 6000, 0, 0, 0)
	if n := b.contactCount(t, b.org.ID); n != 6000 {
		t.Fatalf("contact_counts says %d, want 6,000", n)
	}
}

// Two runs of one import at once (a second delivery while the first is
// still writing) take turns: both answer the one result, and the rows are
// written and counted once.
func TestImportConcurrentRunsCountOnce(t *testing.T) {
	t.Parallel()
	b := setupImport(t)
	var file strings.Builder
	file.WriteString("phone_number,tags\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&file, "+1555050%04d,t%d\n", i, i%3)
	}
	id := b.stage(t, b.org.ID, "contacts", file.String(), nil, true)
	results := make(chan *dataops.ImportResult, 2)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			res, err := b.s.RunImport(context.Background(), b.org.ID, id, io.Discard)
			results <- res
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		wantResult(t, <-results, 5000, 0, 0, 0)
	}
	if n := b.contactCount(t, b.org.ID); n != 5000 {
		t.Fatalf("contact_counts says %d, want 5,000", n)
	}
	if n := b.f.Count("contact_tags", "contact_id IN (SELECT id FROM contacts WHERE organization_id = ?)", b.org.ID); n != 5000 {
		t.Fatalf("%d contact tags, want 5,000", n)
	}
}
