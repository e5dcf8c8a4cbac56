package docframe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
)

// indexes answers the organization's field indexes on the documents table
// and whether each is valid.
func indexes(t *testing.T, f *testfactory.Factory, org uuid.UUID) map[string]bool {
	t.Helper()
	var rows []struct {
		Name  string
		Valid bool
	}
	if err := f.DB.Raw(`SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = 'docframe_documents'::regclass AND c.relname LIKE 'dfx\_%' AND pg_get_indexdef(i.indexrelid) LIKE ?`,
		"%"+org.String()+"%").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range rows {
		out[r.Name] = r.Valid
	}
	return out
}

func fields(n, indexed int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"fieldname": fmt.Sprintf("f%03d", i), "fieldtype": "Data"}
		if i < indexed {
			out[i]["search_index"] = 1
		}
	}
	return out
}

// A DocType has at most 300 fields and 20 unique or indexed ones: past
// them a create or a change is a 417 and nothing is saved.
func TestDocTypeLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	save := func(name string, n, indexed int, create bool) error {
		_, err := b.svc.SaveDocType(ctx, b.admin, b.org.ID, name, map[string]any{"name": name, "fields": fields(n, indexed)}, create)
		return err
	}
	wantExc(t, save("Wide", 301, 0, true), apperr.Invalid, docframe.ExcValidation, "DocType Wide has 301 fields: at most 300 are allowed")
	wantExc(t, save("Indexed", 30, 21, true), apperr.Invalid, docframe.ExcValidation,
		"DocType Indexed has 21 unique or indexed (search_index) fields: at most 20 are allowed")
	if n := b.f.Count("docframe_doctypes", "organization_id = ? AND name IN ('Wide', 'Indexed')", b.org.ID); n != 0 {
		t.Fatalf("%d refused DocTypes stored", n)
	}
	if err := save("Edge", 300, 20, true); err != nil {
		t.Fatalf("300 fields, 20 indexed: %v", err)
	}
	wantExc(t, save("Edge", 300, 21, false), apperr.Invalid, docframe.ExcValidation, "21 unique or indexed")
	dt, err := b.svc.GetDocType(ctx, b.admin, b.org.ID, "Edge")
	if err != nil {
		t.Fatal(err)
	}
	indexed := 0
	for _, f := range dt["fields"].([]any) {
		if f.(map[string]any)["search_index"] == float64(1) {
			indexed++
		}
	}
	if indexed != 20 {
		t.Fatalf("the refused change was saved: %d indexed fields", indexed)
	}
}

// Field indexes are built after the DocType's commit, by the worker's
// docframe:indexes task (BuildIndexes), never in the saving transaction:
// the save answers with no index built and the DocType usable; a unique
// field is enforced meanwhile; the build is idempotent, replaces an invalid
// leftover, runs safely twice at once, and drops what a change no longer
// wants; the sweep makes good lost tasks.
func TestIndexesAreBuiltAfterTheCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org().ID
	queue := testenv.NewQueue(t)
	svc, err := docframe.New(f.DB, f.Box, docframe.Options{Enqueuer: queue.Enqueuer, Log: testenv.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	admin := docframe.Actor{UserID: uuid.New(), Email: "admin@example.test", Role: "Admin"}
	if _, err := svc.SaveDocType(ctx, admin, org, "", obj(t, `{"name": "Ticket", "fields": [
		{"fieldname": "ref", "fieldtype": "Data", "unique": 1}, {"fieldname": "status", "fieldtype": "Data", "search_index": 1},
		{"fieldname": "amount", "fieldtype": "Float", "search_index": 1}]}`), true); err != nil {
		t.Fatal(err)
	}
	if got := indexes(t, f, org); len(got) != 0 {
		t.Fatalf("indexes built in the saving transaction: %v", got)
	}
	tasks := queue.Tasks(t)
	if len(tasks) != 1 || tasks[0].Type != jobs.TypeDocframeIndexes || tasks[0].Queue != jobs.QueueLow {
		t.Fatalf("tasks %+v", tasks)
	}
	var p jobs.DocframeIndexes
	_ = json.Unmarshal(tasks[0].Payload, &p)
	if p.OrganizationID != org || p.Doctype != "Ticket" || len(p.Drop) != 0 {
		t.Fatalf("payload %+v", p)
	}
	// Usable before its indexes: documents, filters, and the unique field.
	if _, err := svc.Insert(ctx, admin, org, "Ticket", obj(t, `{"ref": "R1", "status": "Open", "amount": 5}`)); err != nil {
		t.Fatal(err)
	}
	_, err = svc.Insert(ctx, admin, org, "Ticket", obj(t, `{"ref": "R1", "status": "Open"}`))
	wantExc(t, err, apperr.Conflict, docframe.ExcDuplicateEntry, "is already used by Ticket")
	rows, err := svc.List(ctx, admin, org, "Ticket", docframe.ListArgs{Filters: `{"status": "Open"}`, Limit: -1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("list before the build: %v %v", rows, err)
	}
	// Concurrent writers of one unique value: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 4 {
		wg.Go(func() {
			if _, err := svc.Insert(ctx, admin, org, "Ticket", obj(t, `{"ref": "R2"}`)); err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			} else if !apperr.Is(err, apperr.Conflict) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d inserts of one unique value succeeded", won)
	}

	// The worker's build, twice at once: both succeed, three valid indexes.
	for range 2 {
		wg.Go(func() {
			if err := svc.BuildIndexes(ctx, org, "Ticket", nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	built := indexes(t, f, org)
	if len(built) != 3 {
		t.Fatalf("indexes %v", built)
	}
	for name, valid := range built {
		if !valid {
			t.Fatalf("index %s invalid", name)
		}
	}
	var def string
	f.DB.Raw(`SELECT string_agg(indexdef, ' | ') FROM pg_indexes WHERE tablename = 'docframe_documents' AND indexname LIKE 'dfx%'`).Scan(&def)
	if !strings.Contains(def, "CREATE UNIQUE INDEX") || !strings.Contains(def, "'Ticket'::text") {
		t.Fatalf("index definitions %s", def)
	}
	// The index, once there, still refuses a duplicate.
	_, err = svc.Insert(ctx, admin, org, "Ticket", obj(t, `{"ref": "R1"}`))
	wantExc(t, err, apperr.Conflict, docframe.ExcDuplicateEntry, "must be unique")

	// An invalid leftover (a build that failed or was cancelled) is
	// replaced by the next build.
	var victim string
	for name := range built {
		victim = name
		break
	}
	if err := f.DB.Exec(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = ?::regclass`, victim).Error; err != nil {
		t.Fatal(err)
	}
	if err := svc.BuildIndexes(ctx, org, "Ticket", nil); err != nil {
		t.Fatal(err)
	}
	if got := indexes(t, f, org); !got[victim] || len(got) != 3 {
		t.Fatalf("after replacing an invalid index: %v", got)
	}

	// A change that drops an index names it in its task; the build drops it.
	before := indexes(t, f, org)
	for _, ti := range queue.Tasks(t) {
		_ = queue.Inspector.DeleteTask(ti.Queue, ti.ID)
	}
	if _, err := svc.SaveDocType(ctx, admin, org, "Ticket", obj(t, `{"fields": [
		{"fieldname": "ref", "fieldtype": "Data", "unique": 1}, {"fieldname": "status", "fieldtype": "Data", "search_index": 1},
		{"fieldname": "amount", "fieldtype": "Float"}]}`), false); err != nil {
		t.Fatal(err)
	}
	tasks = queue.Tasks(t)
	if len(tasks) != 1 {
		t.Fatalf("tasks %+v", tasks)
	}
	_ = json.Unmarshal(tasks[0].Payload, &p)
	if len(p.Drop) != 1 || !before[p.Drop[0]] {
		t.Fatalf("drop %v of %v", p.Drop, before)
	}
	if err := svc.BuildIndexes(ctx, org, "Ticket", p.Drop); err != nil {
		t.Fatal(err)
	}
	if got := indexes(t, f, org); len(got) != 2 || got[p.Drop[0]] {
		t.Fatalf("after the drop: %v", got)
	}

	// A unique field over documents that share a value: refused at the
	// save (417), nothing saved.
	if _, err := svc.Insert(ctx, admin, org, "Ticket", obj(t, `{"ref": "R3", "status": "Open"}`)); err != nil {
		t.Fatal(err)
	}
	_, err = svc.SaveDocType(ctx, admin, org, "Ticket", obj(t, `{"fields": [
		{"fieldname": "ref", "fieldtype": "Data", "unique": 1}, {"fieldname": "status", "fieldtype": "Data", "unique": 1}]}`), false)
	wantExc(t, err, apperr.Invalid, docframe.ExcValidation, "field status cannot become unique while documents share a value of it")

	// Lost tasks: the sweep builds what is missing or invalid and drops
	// what no definition wants (here: a deleted DocType's indexes).
	victim = ""
	for name := range indexes(t, f, org) {
		victim = name // one of Ticket's
		break
	}
	if _, err := svc.SaveDocType(ctx, admin, org, "", obj(t, `{"name": "Scratch", "fields": [
		{"fieldname": "code", "fieldtype": "Int", "search_index": 1}]}`), true); err != nil {
		t.Fatal(err)
	}
	if err := svc.BuildIndexes(ctx, org, "Scratch", nil); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteDocType(ctx, admin, org, "Scratch"); err != nil {
		t.Fatal(err)
	}
	f.DB.Exec(`DROP INDEX ` + victim)
	n, d, err := svc.SweepIndexes(ctx)
	if err != nil || n != 1 || d != 1 {
		t.Fatalf("sweep built %d, dropped %d: %v", n, d, err)
	}
	if got := indexes(t, f, org); len(got) != 2 || !got[victim] {
		t.Fatalf("after the sweep: %v", got)
	}
	if n, d, err := svc.SweepIndexes(ctx); err != nil || n+d != 0 {
		t.Fatalf("a second sweep built %d, dropped %d: %v", n, d, err)
	}
}

// sqlLog keeps the statements a service runs (gorm's logger), with their
// values inlined, so that a test can EXPLAIN exactly what a list ran.
type sqlLog struct {
	logger.Interface
	mu   sync.Mutex
	stmt []string
}

func (l *sqlLog) LogMode(logger.LogLevel) logger.Interface { return l }

func (l *sqlLog) Trace(_ context.Context, _ time.Time, fc func() (string, int64), _ error) {
	sql, _ := fc()
	l.mu.Lock()
	l.stmt = append(l.stmt, sql)
	l.mu.Unlock()
}

// A DocType with search fields gets one trigram index over exactly the
// expressions search_term compares, and the list's own search statement
// reads it instead of every document of the DocType; a change that drops
// the search fields drops the index.
func TestSearchTermIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	log := &sqlLog{Interface: logger.Discard}
	svc, err := docframe.New(b.f.DB.Session(&gorm.Session{Logger: log}), b.f.Box, docframe.Options{Log: testenv.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	org := b.org.ID
	if _, err := svc.SaveDocType(ctx, b.admin, org, "", obj(t, `{"name": "Memo", "title_field": "subject", "search_fields": "note, subject",
		"fields": [{"fieldname": "subject", "fieldtype": "Data"}, {"fieldname": "note", "fieldtype": "Data"}]}`), true); err != nil {
		t.Fatal(err)
	}
	if err := b.f.DB.Exec(`INSERT INTO docframe_documents (organization_id, doctype, name, owner, modified_by, creation, modified, data)
		SELECT ?, 'Memo', 'MEMO-' || i, 'a', 'a', now() - i * interval '1 second', now() - i * interval '1 second',
			jsonb_build_object('subject', 'subject ' || md5(i::text), 'note', 'note ' || i)
		FROM generate_series(1, 5000) i`, org).Error; err != nil {
		t.Fatal(err)
	}
	if err := svc.BuildIndexes(ctx, org, "Memo", nil); err != nil {
		t.Fatal(err)
	}
	var def string
	b.f.DB.Raw(`SELECT pg_get_indexdef(c.oid) FROM pg_class c WHERE c.relname LIKE 'dfx\_%' AND pg_get_indexdef(c.oid) LIKE ?`,
		"%"+org.String()+"%").Scan(&def)
	for _, want := range []string{"USING gin (name gin_trgm_ops, ((data ->> 'subject'::text)) gin_trgm_ops, ((data ->> 'note'::text)) gin_trgm_ops)", "'Memo'::text"} {
		if !strings.Contains(def, want) {
			t.Fatalf("search index %q, want %s", def, want)
		}
	}
	if err := b.f.DB.Exec(`ANALYZE docframe_documents`).Error; err != nil {
		t.Fatal(err)
	}

	log.mu.Lock()
	log.stmt = nil
	log.mu.Unlock()
	rows, err := svc.List(ctx, b.admin, org, "Memo", docframe.ListArgs{Fields: `["name", "note"]`, SearchTerm: "note 4321"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("search: %v %v", rows, err)
	}
	var search string
	log.mu.Lock()
	for _, s := range log.stmt {
		if strings.Contains(s, "ILIKE") {
			search = s
		}
	}
	log.mu.Unlock()
	if search == "" {
		t.Fatal("the list ran no search statement")
	}
	var plan []string
	if err := b.f.DB.Raw(`EXPLAIN ` + search).Scan(&plan).Error; err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "Bitmap Index Scan on dfx_") {
		t.Fatalf("the search does not read the trigram index:\n%s\n%s", search, p)
	}

	// A lost build: the sweep reads DocTypes with search fields too (Memo
	// has no unique or search_index field) and builds the index again.
	for name := range indexes(t, b.f, org) {
		b.f.DB.Exec(`DROP INDEX ` + name)
	}
	if n, d, err := svc.SweepIndexes(ctx); err != nil || n != 1 || d != 0 {
		t.Fatalf("sweep built %d, dropped %d: %v", n, d, err)
	}

	// The search fields gone, the index goes with them (reconciled by
	// name: the change names it to drop).
	if _, err := svc.SaveDocType(ctx, b.admin, org, "Memo", obj(t, `{"title_field": "", "search_fields": "",
		"fields": [{"fieldname": "subject", "fieldtype": "Data"}, {"fieldname": "note", "fieldtype": "Data"}]}`), false); err != nil {
		t.Fatal(err)
	}
	before := indexes(t, b.f, org)
	if len(before) != 1 {
		t.Fatalf("indexes before the drop: %v", before)
	}
	drop := make([]string, 0, 1)
	for name := range before {
		drop = append(drop, name)
	}
	if err := svc.BuildIndexes(ctx, org, "Memo", drop); err != nil {
		t.Fatal(err)
	}
	if got := indexes(t, b.f, org); len(got) != 0 {
		t.Fatalf("after the search fields went: %v", got)
	}
}
