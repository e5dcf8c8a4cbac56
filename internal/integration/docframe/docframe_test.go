package docframe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// recorder is a test hook: it records the events it sees, fills a field
// before insert, refuses a validate on demand, and whitelists one method.
type recorder struct {
	mu     sync.Mutex
	seen   []string
	refuse string // a value of "title" that validate refuses
}

func (r *recorder) Doctypes() []string { return []string{"Invoice"} }

func (r *recorder) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, d *docframe.Doc) error {
	r.mu.Lock()
	r.seen = append(r.seen, string(ev)+":"+d.Name)
	r.mu.Unlock()
	switch ev {
	case docframe.BeforeInsert:
		if d.Get("note") == nil {
			d.Set("note", "filled by before_insert")
		}
	case docframe.Validate:
		if r.refuse != "" && d.Get("title") == r.refuse {
			return docframe.Validationf("title %s is refused by a hook", r.refuse)
		}
	case docframe.AfterInsert:
		// A write in the document's transaction: rolls back with it.
		return tx.Exec(`INSERT INTO docframe_series (organization_id, prefix, current) VALUES (?, ?, 1)
			ON CONFLICT (organization_id, prefix) DO UPDATE SET current = docframe_series.current + 1`, d.OrganizationID, "hook:"+d.Name).Error
	}
	return nil
}

func (r *recorder) DocMethods(string) []string { return []string{"approve"} }

func (r *recorder) RunDocMethod(_ context.Context, _ *gorm.DB, method string, d *docframe.Doc, args map[string]any) (any, error) {
	d.Set("status", "Approved")
	return map[string]any{"approved": d.Name, "by": args["by"]}, nil
}

func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.seen...)
}

type sink struct {
	mu     sync.Mutex
	events []string
}

func (s *sink) DocumentEvent(_ context.Context, e docframe.DocEvent) {
	s.mu.Lock()
	s.events = append(s.events, e.Event+":"+e.Doc.Name)
	s.mu.Unlock()
}

func (s *sink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.events...)
}

type bundle struct {
	svc   *docframe.Service
	f     *testfactory.Factory
	org   *testfactory.Org
	admin docframe.Actor
	agent docframe.Actor
	hook  *recorder
	sink  *sink
}

func setup(t *testing.T) *bundle {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	b := &bundle{f: f, org: f.Org(), hook: &recorder{}, sink: &sink{}}
	svc, err := docframe.New(f.DB, f.Box, docframe.Options{Hooks: []docframe.Hook{b.hook}, Events: b.sink, Log: testenv.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	b.svc = svc
	b.admin = docframe.Actor{UserID: uuid.New(), Email: "admin@example.test", Role: "Admin"}
	b.agent = docframe.Actor{UserID: uuid.New(), Email: "agent@example.test", Role: "Agent"}
	return b
}

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

// wantExc checks an error's kind, Frappe exception type and message.
func wantExc(t *testing.T, err error, kind apperr.Kind, exc, msg string) {
	t.Helper()
	testfactory.WantError(t, err, kind, msg)
	var e *docframe.Error
	if !errors.As(err, &e) || e.Exc != exc {
		t.Errorf("error %v: exc_type want %s", err, exc)
	}
}

// invoiceTypes creates the child table Invoice Item, a Customer and the
// submittable Invoice named by a series.
func (b *bundle) invoiceTypes(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, def := range []string{
		`{"name": "Customer", "autoname": "field:customer_name", "title_field": "customer_name",
		  "fields": [{"fieldname": "customer_name", "fieldtype": "Data", "reqd": 1, "unique": 1},
		             {"fieldname": "token", "fieldtype": "Password"}]}`,
		`{"name": "Invoice Item", "istable": 1, "fields": [
		  {"fieldname": "item", "fieldtype": "Data", "reqd": 1}, {"fieldname": "qty", "fieldtype": "Int", "default": "1"},
		  {"fieldname": "rate", "fieldtype": "Currency"}]}`,
		`{"name": "Invoice", "is_submittable": 1, "autoname": "naming_series:", "naming_series": "INV-.YYYY.-.#####",
		  "title_field": "title", "search_fields": "note",
		  "fields": [{"fieldname": "title", "fieldtype": "Data", "reqd": 1},
		    {"fieldname": "customer", "fieldtype": "Link", "options": "Customer"},
		    {"fieldname": "status", "fieldtype": "Select", "options": "Draft\nApproved\nPaid", "default": "Draft", "search_index": 1},
		    {"fieldname": "amount", "fieldtype": "Float", "search_index": 1},
		    {"fieldname": "count", "fieldtype": "Int"}, {"fieldname": "urgent", "fieldtype": "Check"},
		    {"fieldname": "due", "fieldtype": "Date"}, {"fieldname": "sent_at", "fieldtype": "Datetime"},
		    {"fieldname": "note", "fieldtype": "Small Text"}, {"fieldname": "meta", "fieldtype": "JSON"},
		    {"fieldname": "ref", "fieldtype": "Data", "unique": 1},
		    {"fieldname": "items", "fieldtype": "Table", "options": "Invoice Item"}],
		  "permissions": [{"role": "Manager", "read": 1, "write": 1, "create": 1, "submit": 1},
		                  {"role": "Agent", "read": 1}]}`,
	} {
		if _, err := b.svc.SaveDocType(ctx, b.admin, b.org.ID, "", obj(t, def), true); err != nil {
			t.Fatalf("create DocType: %v\n%s", err, def)
		}
	}
}

func TestDocTypeDefinitionsAreValidated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	for def, want := range map[string]string{
		`{"name": "X", "fields": [{"fieldname": "a", "fieldtype": "Blob"}]}`:                                         `unknown fieldtype "Blob"`,
		`{"name": "X", "fields": [{"fieldname": "owner", "fieldtype": "Data"}]}`:                                     "fieldname owner is reserved",
		`{"name": "X", "fields": [{"fieldname": "_x", "fieldtype": "Data"}]}`:                                        `fieldname "_x" must match`,
		`{"name": "X", "fields": [{"fieldname": "Bad-Name", "fieldtype": "Data"}]}`:                                  `fieldname "Bad-Name" must match`,
		`{"name": "X", "fields": [{"fieldname": "a", "fieldtype": "Data"}, {"fieldname": "a", "fieldtype": "Int"}]}`: "appears more than once",
		`{"name": "X", "fields": [{"fieldname": "s", "fieldtype": "Select"}]}`:                                       "a Select needs options",
		`{"name": "X", "fields": [{"fieldname": "c", "fieldtype": "Link", "options": "Nope"}]}`:                      `DocType "Nope" does not exist`,
		`{"name": "X", "fields": [{"fieldname": "c", "fieldtype": "Table", "options": "Customer"}]}`:                 "is not a child table",
		`{"name": "X", "autoname": "field:nope"}`:                                                                    "must name a text or Int field",
		`{"name": "X", "autoname": "naming_series:"}`:                                                                "needs a naming_series",
		`{"name": "DocType"}`: "is reserved",
		`{"name": "1bad"}`:    "must start with a letter",
		`{"name": "X", "fields": [{"fieldname": "p", "fieldtype": "Password", "unique": 1}]}`: "cannot be unique or indexed",
	} {
		_, err := b.svc.SaveDocType(ctx, b.admin, b.org.ID, "", obj(t, def), true)
		wantExc(t, err, apperr.Invalid, docframe.ExcValidation, want)
	}
	_, err := b.svc.SaveDocType(ctx, b.agent, b.org.ID, "", obj(t, `{"name": "Y"}`), true)
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "Admin role")
	_, err = b.svc.SaveDocType(ctx, b.admin, b.org.ID, "", obj(t, `{"name": "Customer"}`), true)
	wantExc(t, err, apperr.Conflict, docframe.ExcDuplicateEntry, "already exists")
	if n := b.f.Count("docframe_doctypes", "organization_id = ?", b.org.ID); n != 3 {
		t.Fatalf("%d DocTypes after refusals, want 3", n)
	}

	// A DocType with documents cannot go; nor one a Link or a Table uses.
	if _, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Customer", obj(t, `{"customer_name": "Acme"}`)); err != nil {
		t.Fatal(err)
	}
	wantExc(t, b.svc.DeleteDocType(ctx, b.admin, b.org.ID, "Customer"), apperr.Invalid, docframe.ExcLinkExists, "has documents")
	wantExc(t, b.svc.DeleteDocType(ctx, b.admin, b.org.ID, "Invoice Item"), apperr.Invalid, docframe.ExcLinkExists, "used by Invoice.items")
	wantExc(t, b.svc.DeleteDocType(ctx, b.agent, b.org.ID, "Invoice"), apperr.Forbidden, docframe.ExcPermission, "Admin role")
	if err := b.svc.DeleteDocType(ctx, b.admin, b.org.ID, "Invoice"); err != nil {
		t.Fatalf("delete an unused DocType: %v", err)
	}
	var indexes int64
	b.f.DB.Raw(`SELECT count(*) FROM pg_indexes WHERE tablename = 'docframe_documents' AND indexdef LIKE ?`, "%"+b.org.ID.String()+"%Invoice'%").Scan(&indexes)
	if indexes != 0 {
		t.Fatalf("%d indexes of the deleted DocType remain", indexes)
	}

	// Built-in DocTypes: idempotent, and neither changed nor deleted by users.
	def := docframe.DocType{Name: "Platform Thing", Fields: []docframe.Field{{Fieldname: "a", Fieldtype: "Data", SearchIndex: 1}}}
	for range 2 {
		if err := b.svc.EnsureDocType(ctx, b.org.ID, def); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.svc.GetDocType(ctx, b.agent, b.org.ID, "Platform Thing")
	if err != nil || got["custom"] != 0 {
		t.Fatalf("built-in DocType: %v %v", got, err)
	}
	wantExc(t, b.svc.DeleteDocType(ctx, b.admin, b.org.ID, "Platform Thing"), apperr.Forbidden, docframe.ExcPermission, "built in")
	_, err = b.svc.SaveDocType(ctx, b.admin, b.org.ID, "Platform Thing", obj(t, `{"module": "Mine"}`), false)
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "built in")
}

func TestInsertNamesValidatesAndRunsHooksInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	if _, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Customer", obj(t, `{"customer_name": "Acme", "token": "s3cret"}`)); err != nil {
		t.Fatal(err)
	}
	year := time.Now().UTC().Format("2006")
	doc, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, `{"title": "First", "customer": "Acme", "amount": "12.5",
		"count": "5", "urgent": true, "due": "2026-01-02", "sent_at": "2026-01-02T10:11:12+02:00", "meta": "{\"a\": 1}",
		"items": [{"item": "Bolt", "qty": 3, "rate": 2.5}, {"item": "Nut"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if doc["name"] != "INV-"+year+"-00001" || doc["id"] != doc["name"] || doc["docstatus"] != 0 || doc["owner"] != "admin@example.test" {
		t.Fatalf("named %v id %v docstatus %v owner %v", doc["name"], doc["id"], doc["docstatus"], doc["owner"])
	}
	if doc["count"] != int64(5) || doc["amount"] != 12.5 || doc["urgent"] != int64(1) || doc["due"] != "2026-01-02" ||
		doc["sent_at"] != "2026-01-02 08:11:12" || doc["status"] != "Draft" || doc["note"] != "filled by before_insert" {
		t.Fatalf("coerced values: %v", doc)
	}
	if m, ok := doc["meta"].(map[string]any); !ok || fmt.Sprint(m["a"]) != "1" {
		t.Fatalf("JSON field %v", doc["meta"])
	}
	items := doc["items"].([]map[string]any)
	if len(items) != 2 || items[0]["idx"] != 1 || items[0]["parent"] != doc["name"] || items[0]["parenttype"] != "Invoice" ||
		items[0]["parentfield"] != "items" || items[0]["doctype"] != "Invoice Item" || items[1]["qty"] != int64(1) || items[0]["name"] == "" {
		t.Fatalf("child rows %v", items)
	}
	if _, err := time.Parse("2006-01-02 15:04:05", doc["creation"].(string)); err != nil {
		t.Fatalf("creation %v", doc["creation"])
	}
	second, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, `{"title": "Second", "note": "given"}`))
	if err != nil || second["name"] != "INV-"+year+"-00002" || second["note"] != "given" {
		t.Fatalf("second: %v %v", second["name"], err)
	}
	want := []string{"before_insert:", "validate:" + doc["name"].(string), "after_insert:" + doc["name"].(string), "on_update:" + doc["name"].(string)}
	if got := b.hook.events()[:4]; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("hook order %v, want %v", got, want)
	}

	// Refusals: nothing is stored, and no series number is used up.
	for body, exp := range map[string]struct {
		kind     apperr.Kind
		exc, msg string
	}{
		`{}`:                                                   {apperr.Invalid, docframe.ExcMandatory, "Value missing for Invoice: title"},
		`{"title": "x", "status": "Lost"}`:                     {apperr.Invalid, docframe.ExcValidation, `status cannot be "Lost". It should be one of "Draft", "Approved", "Paid"`},
		`{"title": "x", "count": "five"}`:                      {apperr.Invalid, docframe.ExcValidation, `count must be a whole number, not "five"`},
		`{"title": "x", "count": 1.5}`:                         {apperr.Invalid, docframe.ExcValidation, "count must be a whole number"},
		`{"title": "x", "urgent": 2}`:                          {apperr.Invalid, docframe.ExcValidation, "urgent must be 0 or 1"},
		`{"title": "x", "due": "02/01/2026"}`:                  {apperr.Invalid, docframe.ExcValidation, "due must be a date"},
		`{"title": "x", "sent_at": "yesterday"}`:               {apperr.Invalid, docframe.ExcValidation, "sent_at must be a date and time"},
		`{"title": "x", "customer": "Nobody"}`:                 {apperr.Invalid, docframe.ExcLinkValidation, `Could not find customer: "Nobody"`},
		`{"title": "x", "items": [{"qty": 1}]}`:                {apperr.Invalid, docframe.ExcMandatory, "items row 1: Value missing for Invoice Item: item"},
		`{"title": "x", "items": {"item": "a"}}`:               {apperr.Invalid, docframe.ExcValidation, "items must be a list of rows"},
		`{"title": "refused"}`:                                 {apperr.Invalid, docframe.ExcValidation, "refused by a hook"},
		`{"title": "x", "items": [{"item": "a", "qty": "x"}]}`: {apperr.Invalid, docframe.ExcValidation, "items row 1: qty must be a whole number"},
	} {
		b.hook.refuse = "refused"
		_, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, body))
		wantExc(t, err, exp.kind, exp.exc, exp.msg)
	}
	if n := b.f.Count("docframe_documents", "organization_id = ? AND doctype = 'Invoice'", b.org.ID); n != 2 {
		t.Fatalf("%d invoices after refusals", n)
	}
	if n := b.f.Count("docframe_series", "organization_id = ? AND prefix LIKE 'hook:%'", b.org.ID); n != 2 {
		t.Fatalf("the after_insert hook's rows: %d, want one per stored invoice", n)
	}
	third, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, `{"title": "Third", "ref": "R-1"}`))
	if err != nil || third["name"] != "INV-"+year+"-00003" {
		t.Fatalf("after refusals the series continues at 3: %v %v", third["name"], err)
	}
	_, err = b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, `{"title": "Dup", "ref": "R-1"}`))
	wantExc(t, err, apperr.Conflict, docframe.ExcDuplicateEntry, `ref "R-1" is already used by Invoice `+third["name"].(string))
	_, err = b.svc.Insert(ctx, b.admin, b.org.ID, "Customer", obj(t, `{"customer_name": "Acme"}`))
	wantExc(t, err, apperr.Conflict, docframe.ExcDuplicateEntry, "Customer Acme already exists")

	// Events reach the sink after the commit, refused inserts none.
	if got := b.sink.all(); len(got) != 4 || got[1] != "After Insert:"+doc["name"].(string) {
		t.Fatalf("sink %v", got)
	}
}

func TestSeriesAreTakenAtomically(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	var wg sync.WaitGroup
	names := make(chan string, 20)
	for range 20 {
		wg.Go(func() {
			d, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, `{"title": "x"}`))
			if err != nil {
				t.Error(err)
				return
			}
			names <- d["name"].(string)
		})
	}
	wg.Wait()
	close(names)
	seen := map[string]bool{}
	for n := range names {
		seen[n] = true
	}
	year := time.Now().UTC().Format("2006")
	for i := 1; i <= 20; i++ {
		if n := fmt.Sprintf("INV-%s-%05d", year, i); !seen[n] {
			t.Fatalf("%s missing from %v", n, seen)
		}
	}
}

func TestUpdateSubmitCancelDelete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	d, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, `{"title": "T", "amount": 3, "items": [{"item": "a"}, {"item": "b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	name := d["name"].(string)
	firstRow := d["items"].([]map[string]any)[0]["name"]
	// Only the given fields change; a given table replaces the table.
	u, err := b.svc.Update(ctx, b.admin, b.org.ID, "Invoice", name, obj(t, fmt.Sprintf(`{"amount": "4.25", "items": [{"name": %q, "item": "a2"}]}`, firstRow)))
	if err != nil {
		t.Fatal(err)
	}
	rows := u["items"].([]map[string]any)
	if u["title"] != "T" || u["amount"] != 4.25 || len(rows) != 1 || rows[0]["item"] != "a2" || rows[0]["name"] != firstRow {
		t.Fatalf("update: %v", u)
	}
	_, err = b.svc.Update(ctx, b.admin, b.org.ID, "Invoice", name, obj(t, `{"title": ""}`))
	wantExc(t, err, apperr.Invalid, docframe.ExcMandatory, "Value missing for Invoice: title")

	// Submit, then nothing changes it but cancel; cancelled is final.
	s, err := b.svc.Submit(ctx, b.admin, b.org.ID, "Invoice", name)
	if err != nil || s["docstatus"] != 1 {
		t.Fatalf("submit: %v %v", s["docstatus"], err)
	}
	_, err = b.svc.Update(ctx, b.admin, b.org.ID, "Invoice", name, obj(t, `{"amount": 1}`))
	wantExc(t, err, apperr.Invalid, docframe.ExcUpdateAfterSubmit, "is submitted: it cannot be changed")
	_, err = b.svc.Submit(ctx, b.admin, b.org.ID, "Invoice", name)
	wantExc(t, err, apperr.Invalid, docframe.ExcDocstatusTransition, "already submitted")
	wantExc(t, b.svc.Delete(ctx, b.admin, b.org.ID, "Invoice", name), apperr.Invalid, docframe.ExcDocstatusTransition, "cancel it before deleting")
	c, err := b.svc.Cancel(ctx, b.admin, b.org.ID, "Invoice", name)
	if err != nil || c["docstatus"] != 2 {
		t.Fatalf("cancel: %v %v", c["docstatus"], err)
	}
	_, err = b.svc.Update(ctx, b.admin, b.org.ID, "Invoice", name, obj(t, `{"amount": 1}`))
	wantExc(t, err, apperr.Invalid, docframe.ExcUpdateAfterSubmit, "is cancelled")
	_, err = b.svc.Cancel(ctx, b.admin, b.org.ID, "Invoice", name)
	wantExc(t, err, apperr.Invalid, docframe.ExcDocstatusTransition, "already cancelled")
	_, err = b.svc.Submit(ctx, b.admin, b.org.ID, "Invoice", name)
	wantExc(t, err, apperr.Invalid, docframe.ExcDocstatusTransition, "is cancelled")

	// Submitting a non-submittable DocType is refused.
	if _, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Customer", obj(t, `{"customer_name": "Acme"}`)); err != nil {
		t.Fatal(err)
	}
	_, err = b.svc.Submit(ctx, b.admin, b.org.ID, "Customer", "Acme")
	wantExc(t, err, apperr.Invalid, docframe.ExcDocstatusTransition, "Customer is not submittable")

	// A linked document cannot be deleted; a cancelled one can.
	if _, err := b.svc.Update(ctx, b.admin, b.org.ID, "Invoice", mustInsert(t, b, "Invoice", `{"title": "L", "customer": "Acme"}`), obj(t, `{}`)); err != nil {
		t.Fatal(err)
	}
	wantExc(t, b.svc.Delete(ctx, b.admin, b.org.ID, "Customer", "Acme"), apperr.Invalid, docframe.ExcLinkExists, "linked with Invoice")
	if err := b.svc.Delete(ctx, b.admin, b.org.ID, "Invoice", name); err != nil {
		t.Fatalf("delete cancelled: %v", err)
	}
	_, err = b.svc.Get(ctx, b.admin, b.org.ID, "Invoice", name)
	wantExc(t, err, apperr.NotFound, docframe.ExcDoesNotExist, "not found")

	// PUT docstatus 1 submits after saving (Frappe's save with docstatus).
	other := mustInsert(t, b, "Invoice", `{"title": "P"}`)
	p, err := b.svc.Update(ctx, b.admin, b.org.ID, "Invoice", other, obj(t, `{"title": "P2", "docstatus": 1}`))
	if err != nil || p["docstatus"] != 1 || p["title"] != "P2" {
		t.Fatalf("save and submit: %v %v", p, err)
	}
	evs := strings.Join(b.sink.all(), ",")
	for _, want := range []string{"After Save:" + name, "After Submit:" + name, "After Cancel:" + name, "Before Delete:" + name, "After Submit:" + other} {
		if !strings.Contains(evs, want) {
			t.Fatalf("events %s lack %s", evs, want)
		}
	}
	h := strings.Join(b.hook.events(), ",")
	for _, want := range []string{"on_submit:" + name, "on_cancel:" + name, "on_trash:" + name} {
		if !strings.Contains(h, want) {
			t.Fatalf("hooks %s lack %s", h, want)
		}
	}
}

func mustInsert(t *testing.T, b *bundle, doctype, body string) string {
	t.Helper()
	d, err := b.svc.Insert(context.Background(), b.admin, b.org.ID, doctype, obj(t, body))
	if err != nil {
		t.Fatal(err)
	}
	return d["name"].(string)
}

func TestPermissionsAndTenancy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	name := mustInsert(t, b, "Invoice", `{"title": "T"}`)
	mustInsert(t, b, "Customer", `{"customer_name": "Acme"}`)

	// Customer lists no permissions: every role reads, only Admin writes.
	if _, err := b.svc.Get(ctx, b.agent, b.org.ID, "Customer", "Acme"); err != nil {
		t.Fatalf("agent reads by default: %v", err)
	}
	_, err := b.svc.Insert(ctx, b.agent, b.org.ID, "Customer", obj(t, `{"customer_name": "B"}`))
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "Not permitted: create on Customer for role Agent")
	wantExc(t, b.svc.Delete(ctx, b.agent, b.org.ID, "Customer", "Acme"), apperr.Forbidden, docframe.ExcPermission, "delete")

	// Invoice's DocPerms: Manager creates and submits but does not cancel;
	// Agent reads.
	mgr := docframe.Actor{Email: "m@example.test", Role: "Manager"}
	mine := mustInsertAs(t, b, mgr, "Invoice", `{"title": "by manager"}`)
	if _, err := b.svc.Submit(ctx, mgr, b.org.ID, "Invoice", mine); err != nil {
		t.Fatal(err)
	}
	_, err = b.svc.Cancel(ctx, mgr, b.org.ID, "Invoice", mine)
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "cancel")
	_, err = b.svc.Update(ctx, b.agent, b.org.ID, "Invoice", name, obj(t, `{"title": "x"}`))
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "write")
	rows, err := b.svc.List(ctx, b.agent, b.org.ID, "Invoice", docframe.ListArgs{Limit: -1})
	if err != nil || len(rows) != 2 {
		t.Fatalf("agent lists: %v %v", rows, err)
	}
	custom := docframe.Actor{Email: "c@example.test", Role: "Auditor"}
	_, err = b.svc.List(ctx, custom, b.org.ID, "Invoice", docframe.ListArgs{Limit: -1})
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "read")

	// Another organization sees none of it.
	other := b.f.Org()
	_, err = b.svc.Get(ctx, b.admin, other.ID, "Invoice", name)
	wantExc(t, err, apperr.NotFound, docframe.ExcDoesNotExist, "DocType Invoice not found")
	_, err = b.svc.List(ctx, b.admin, other.ID, "Invoice", docframe.ListArgs{Limit: -1})
	wantExc(t, err, apperr.NotFound, docframe.ExcDoesNotExist, "not found")
	dts, err := b.svc.List(ctx, b.admin, other.ID, "DocType", docframe.ListArgs{Limit: -1})
	if err != nil || len(dts) != 0 {
		t.Fatalf("other org's DocTypes %v %v", dts, err)
	}
}

func mustInsertAs(t *testing.T, b *bundle, a docframe.Actor, doctype, body string) string {
	t.Helper()
	d, err := b.svc.Insert(context.Background(), a, b.org.ID, doctype, obj(t, body))
	if err != nil {
		t.Fatal(err)
	}
	return d["name"].(string)
}

func TestPasswordsAreSealedAndMasked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	d, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Customer", obj(t, `{"customer_name": "Acme", "token": "s3cret"}`))
	if err != nil || d["token"] != docframe.Mask {
		t.Fatalf("create answer %v %v", d["token"], err)
	}
	var raw string
	b.f.DB.Raw(`SELECT data::text || secrets::text FROM docframe_documents WHERE organization_id = ?`, b.org.ID).Scan(&raw)
	if strings.Contains(raw, "s3cret") {
		t.Fatalf("the secret is stored in clear: %s", raw)
	}
	if got, _ := b.svc.GetPassword(ctx, b.org.ID, "Customer", "Acme", "token"); got != "s3cret" {
		t.Fatalf("GetPassword %q", got)
	}
	rows, err := b.svc.List(ctx, b.admin, b.org.ID, "Customer", docframe.ListArgs{Fields: `["*"]`, Limit: -1})
	if err != nil || rows[0].(map[string]any)["token"] != docframe.Mask {
		t.Fatalf("list %v %v", rows, err)
	}
	if _, err := b.svc.Update(ctx, b.admin, b.org.ID, "Customer", "Acme", obj(t, `{"token": "*****"}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.svc.GetPassword(ctx, b.org.ID, "Customer", "Acme", "token"); got != "s3cret" {
		t.Fatalf("a masked save kept %q", got)
	}
	if _, err := b.svc.Update(ctx, b.admin, b.org.ID, "Customer", "Acme", obj(t, `{"token": "new"}`)); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.svc.GetPassword(ctx, b.org.ID, "Customer", "Acme", "token"); got != "new" {
		t.Fatalf("after a change %q", got)
	}
	_, err = b.svc.List(ctx, b.admin, b.org.ID, "Customer", docframe.ListArgs{Filters: `[["token", "=", "new"]]`, Limit: -1})
	wantExc(t, err, apperr.Invalid, docframe.ExcValidation, "cannot be used in filters")
}

func TestRunMethodSavesChanges(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	name := mustInsert(t, b, "Invoice", `{"title": "T"}`)
	res, err := b.svc.RunMethod(ctx, b.admin, b.org.ID, "Invoice", name, "approve", map[string]any{"by": "boss"})
	if err != nil || res.(map[string]any)["approved"] != name {
		t.Fatalf("run_method: %v %v", res, err)
	}
	d, _ := b.svc.Get(ctx, b.admin, b.org.ID, "Invoice", name)
	if d["status"] != "Approved" {
		t.Fatalf("status %v", d["status"])
	}
	_, err = b.svc.RunMethod(ctx, b.admin, b.org.ID, "Invoice", name, "delete_everything", nil)
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "not whitelisted")
}

func TestListFiltersOrderPagingAndIndexes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	for i := 1; i <= 6; i++ {
		status := []string{"Draft", "Approved", "Paid"}[i%3]
		mustInsert(t, b, "Invoice", fmt.Sprintf(`{"title": "Inv %d", "amount": %d, "status": %q, "due": "2026-01-0%d", "note": "n%d",
			"sent_at": "2026-01-0%d 12:00:00", "urgent": %d}`, i, i*10, status, i, i, i, i%2))
	}
	names := func(args docframe.ListArgs) string {
		t.Helper()
		if args.Limit == 0 {
			args.Limit = -1
		}
		rows, err := b.svc.List(ctx, b.admin, b.org.ID, "Invoice", args)
		if err != nil {
			t.Fatalf("%+v: %v", args, err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, strings.TrimPrefix(r.(map[string]any)["title"].(string), "Inv "))
		}
		return strings.Join(out, ",")
	}
	asc := func(filters string) docframe.ListArgs {
		return docframe.ListArgs{Fields: `["title"]`, Filters: filters, OrderBy: "amount asc"}
	}
	for filters, want := range map[string]string{
		`[["amount", ">", 30]]`:                                  "4,5,6",
		`[["amount", ">=", "30"]]`:                               "3,4,5,6",
		`[["amount", "<", 30]]`:                                  "1,2",
		`[["amount", "<=", 30]]`:                                 "1,2,3",
		`[["amount", "=", 20]]`:                                  "2",
		`[["amount", "!=", 20]]`:                                 "1,3,4,5,6",
		`[["status", "<>", "Paid"]]`:                             "1,3,4,6",
		`[["title", "like", "Inv 1"]]`:                           "1",
		`[["title", "like", "%v 2"]]`:                            "2",
		`[["title", "not like", "Inv 1"]]`:                       "2,3,4,5,6",
		`[["status", "in", ["Paid", "Approved"]]]`:               "1,2,4,5",
		`[["status", "in", "Paid, Approved"]]`:                   "1,2,4,5",
		`[["status", "not in", ["Paid"]]]`:                       "1,3,4,6",
		`[["due", "between", ["2026-01-02", "2026-01-04"]]]`:     "2,3,4",
		`[["sent_at", "between", ["2026-01-02", "2026-01-03"]]]`: "2,3",
		`[["ref", "is", null]]`:                                  "1,2,3,4,5,6",
		`[["ref", "is", "set"]]`:                                 "",
		`[["note", "is not", null]]`:                             "1,2,3,4,5,6",
		`[["customer", "is", "not set"]]`:                        "1,2,3,4,5,6",
		`[["urgent", "=", true]]`:                                "1,3,5",
		`[["Invoice", "amount", ">", 40]]`:                       "5,6",
		`{"status": "Paid"}`:                                     "2,5",
		`{"amount": [">", 40], "status": "Paid"}`:                "5",
		`[["amount", "in", []]]`:                                 "",
		`[["docstatus", "=", 0]]`:                                "1,2,3,4,5,6",
		`[["creation", ">", "2000-01-01"]]`:                      "1,2,3,4,5,6",
	} {
		if got := names(asc(filters)); got != want {
			t.Errorf("filters %s: %q, want %q", filters, got, want)
		}
	}
	if got := names(docframe.ListArgs{Fields: "title", OrFilters: `[["amount", "=", 10], ["amount", "=", 60]]`, OrderBy: "amount desc"}); got != "6,1" {
		t.Errorf("or_filters %q", got)
	}
	if got := names(docframe.ListArgs{Fields: "title", OrderBy: "amount desc", Limit: 2, Offset: 1}); got != "5,4" {
		t.Errorf("paging %q", got)
	}
	if got := names(docframe.ListArgs{Fields: "title", SearchTerm: "n4"}); got != "4" {
		t.Errorf("search in search_fields %q", got)
	}
	if got := names(docframe.ListArgs{Fields: "title", SearchTerm: "inv 3"}); got != "3" {
		t.Errorf("search in title %q", got)
	}
	if got := names(docframe.ListArgs{Fields: "title", OrderBy: "`tabInvoice`.`amount` asc", Limit: 1}); got != "1" {
		t.Errorf("qualified order_by %q", got)
	}
	rows, _ := b.svc.List(ctx, b.admin, b.org.ID, "Invoice", docframe.ListArgs{Limit: -1})
	if len(rows) != 6 || len(rows[0].(map[string]any)) != 1 {
		t.Fatalf("default rows carry name only: %v", rows[0])
	}
	n, err := b.svc.Count(ctx, b.admin, b.org.ID, "Invoice", docframe.ListArgs{Filters: `{"status": "Paid"}`})
	if err != nil || n != 2 {
		t.Fatalf("count %d %v", n, err)
	}
	for args, msg := range map[*docframe.ListArgs]string{
		{Filters: `[["nope", "=", 1]]`}:           `unknown field "nope" of Invoice`,
		{Filters: `[["amount", "~", 1]]`}:         `unknown operator "~"`,
		{Filters: `not json`}:                     "filters must be JSON",
		{Filters: `[["amount", "=", "x"]]`}:       `"x" is not a number`,
		{Filters: `[["amount", "between", [1]]]`}: "between needs two values",
		{Filters: `[["title", "like", "%a\\"]]`}:  "the pattern ends with an escape",
		{Filters: `[["Other", "a", "=", 1]]`}:     "child table filters are not supported",
		{Filters: `[["items", "=", 1]]`}:          "cannot be used in filters",
		{Fields: `["title; drop table x"]`}:       "unknown field",
		{Fields: `["items"]`}:                     "is a table",
		{OrderBy: "amount sideways"}:              "must be asc or desc",
		{OrderBy: "(select 1)"}:                   "unknown field",
		{Limit: 5000}:                             "limit must be at most 1000",
	} {
		_, err := b.svc.List(ctx, b.admin, b.org.ID, "Invoice", *args)
		wantExc(t, err, apperr.Invalid, docframe.ExcValidation, msg)
	}

	// The filter expressions are the indexes' own: the planner uses them
	// (sequential scans off: on a table this small it would rather scan).
	// The worker builds them after the DocType's commit; here directly.
	if err := b.svc.BuildIndexes(ctx, b.org.ID, "Invoice", nil); err != nil {
		t.Fatal(err)
	}
	for _, probe := range []string{`(data ->> 'status') = 'Paid'`, `((data ->> 'amount')::numeric) > CAST('50' AS numeric)`} {
		var plan []string
		err := b.f.DB.Transaction(func(tx *gorm.DB) error {
			tx.Exec("SET LOCAL enable_seqscan = off")
			return tx.Raw(`EXPLAIN SELECT name FROM docframe_documents WHERE organization_id = ? AND doctype = 'Invoice' AND `+probe, b.org.ID).Scan(&plan).Error
		})
		if p := strings.Join(plan, "\n"); err != nil || !strings.Contains(p, "dfx_") {
			t.Errorf("%s does not use a field index (%v):\n%s", probe, err, p)
		}
	}
}

// The integration calls EnsureDocType on first use, possibly from several
// requests at once: every call succeeds and one DocType results.
func TestEnsureDocTypeConcurrently(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := docframe.DocType{Name: "Platform Message", Fields: []docframe.Field{{Fieldname: "to", Fieldtype: "Data", SearchIndex: 1},
		{Fieldname: "status", Fieldtype: "Select", Options: "Queued\nsent"}}}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if err := b.svc.EnsureDocType(context.Background(), b.org.ID, def); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := b.f.Count("docframe_doctypes", "organization_id = ? AND name = 'Platform Message' AND NOT custom", b.org.ID); n != 1 {
		t.Fatalf("%d built-in DocTypes", n)
	}
	// A changed definition is applied; the index follows.
	def.Fields[0].SearchIndex = 0
	if err := b.svc.EnsureDocType(context.Background(), b.org.ID, def); err != nil {
		t.Fatal(err)
	}
	var indexes int64
	b.f.DB.Raw(`SELECT count(*) FROM pg_indexes WHERE tablename = 'docframe_documents' AND indexdef LIKE ?`, "%"+b.org.ID.String()+"%").Scan(&indexes)
	if indexes != 0 {
		t.Fatalf("%d field indexes after search_index was turned off", indexes)
	}
}

// A built-in DocType's Data field may become a Link while it has
// documents (an upgrade of the definition): the stored values stay, a value
// naming no document is refused at the next save. Other type changes stay
// refused.
func TestADataFieldMayBecomeALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	target := docframe.DocType{Name: "Target", Autoname: "field:code", Fields: []docframe.Field{{Fieldname: "code", Fieldtype: "Data", Reqd: 1}}}
	def := docframe.DocType{Name: "Pointer", Fields: []docframe.Field{{Fieldname: "to", Fieldtype: "Data"}, {Fieldname: "n", Fieldtype: "Int"}}}
	for _, d := range []docframe.DocType{target, def} {
		if err := b.svc.EnsureDocType(ctx, b.org.ID, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Target", obj(t, `{"code": "T1"}`)); err != nil {
		t.Fatal(err)
	}
	good := mustInsert(t, b, "Pointer", `{"to": "T1"}`)
	stale := mustInsert(t, b, "Pointer", `{"to": "gone"}`)
	def.Fields[0] = docframe.Field{Fieldname: "to", Fieldtype: "Link", Options: "Target"}
	if err := b.svc.EnsureDocType(ctx, b.org.ID, def); err != nil {
		t.Fatalf("Data to Link with documents: %v", err)
	}
	if d, err := b.svc.Get(ctx, b.admin, b.org.ID, "Pointer", stale); err != nil || d["to"] != "gone" {
		t.Fatalf("the stored value after the upgrade: %v %v", d, err)
	}
	if _, err := b.svc.Update(ctx, b.admin, b.org.ID, "Pointer", good, obj(t, `{"n": 2}`)); err != nil {
		t.Fatalf("a save with a valid link: %v", err)
	}
	_, err := b.svc.Update(ctx, b.admin, b.org.ID, "Pointer", stale, obj(t, `{"n": 2}`))
	wantExc(t, err, apperr.Invalid, "LinkValidationError", "gone")
	def.Fields[1].Fieldtype = "Data"
	err = b.svc.EnsureDocType(ctx, b.org.ID, def)
	testfactory.WantError(t, err, apperr.Invalid, "its type cannot change from Int to Data")
}

// binder is a hook that needs the framework back.
type binder struct{ frame *docframe.Service }

func (b *binder) Doctypes() []string { return []string{"Invoice"} }
func (b *binder) Handle(context.Context, *gorm.DB, docframe.Event, *docframe.Doc) error {
	return nil
}
func (b *binder) Bind(s *docframe.Service) { b.frame = s }

func TestNewBindsTheHooksThatNeedTheFramework(t *testing.T) {
	t.Parallel()
	hook, sink, other := &binder{}, &bindingSink{}, &bindingSink{}
	svc, err := docframe.New(nil, nil, docframe.Options{Hooks: []docframe.Hook{hook}, Events: docframe.EventSinks{sink, other},
		Log: testenv.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if hook.frame != svc || sink.frame != svc || other.frame != svc {
		t.Fatalf("not bound: hook %p sinks %p %p, framework %p", hook.frame, sink.frame, other.frame, svc)
	}
}

type bindingSink struct{ frame *docframe.Service }

func (b *bindingSink) DocumentEvent(context.Context, docframe.DocEvent) {}
func (b *bindingSink) Bind(s *docframe.Service)                         { b.frame = s }

// A missing built-in DocType is created on first use, except under
// WithoutBuiltIn, where the read answers not found and creates nothing.
func TestBuiltInDocTypesAndWithoutBuiltIn(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	calls := 0
	var svc *docframe.Service
	svc, err := docframe.New(f.DB, f.Box, docframe.Options{Log: testenv.Quiet(),
		BuiltIn: func(ctx context.Context, orgID uuid.UUID, doctype string) (bool, error) {
			calls++
			if doctype != "Gadget" {
				return false, nil
			}
			return true, svc.EnsureDocType(ctx, orgID, docframe.DocType{Name: "Gadget", Fields: []docframe.Field{
				{Fieldname: "label", Fieldtype: "Data"}}})
		}})
	if err != nil {
		t.Fatal(err)
	}
	admin := docframe.Actor{UserID: uuid.New(), Email: "admin@example.test", Role: "Admin"}
	ctx := context.Background()
	if _, err := svc.List(docframe.WithoutBuiltIn(ctx), admin, org.ID, "Gadget", docframe.ListArgs{}); !apperr.Is(err, apperr.NotFound) || calls != 0 {
		t.Fatalf("without built-in: %v, %d calls", err, calls)
	}
	if rows, err := svc.List(ctx, admin, org.ID, "Gadget", docframe.ListArgs{}); err != nil || len(rows) != 0 || calls != 1 {
		t.Fatalf("built in on first use: %v %v, %d calls", rows, err, calls)
	}
}
