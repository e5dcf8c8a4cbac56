package docframe_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
)

// SetValues changes a submitted document's system fields, coerced and
// checked, without hooks; refusals change nothing; another organization's
// document does not exist.
func TestSetValuesWritesSubmittedDocumentsDirectly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.invoiceTypes(t)
	doc, err := b.svc.Insert(ctx, b.admin, b.org.ID, "Invoice", obj(t, `{"title": "A"}`))
	if err != nil {
		t.Fatal(err)
	}
	name := doc["name"].(string)
	if _, err := b.svc.Submit(ctx, b.admin, b.org.ID, "Invoice", name); err != nil {
		t.Fatal(err)
	}
	before := len(b.hook.events())
	if err := b.svc.SetValues(ctx, nil, b.org.ID, "Invoice", name, map[string]any{"status": "Paid", "count": "7"}); err != nil {
		t.Fatal(err)
	}
	got, err := b.svc.Get(ctx, b.admin, b.org.ID, "Invoice", name)
	if err != nil {
		t.Fatal(err)
	}
	if got["status"] != "Paid" || got["count"] != int64(7) || got["title"] != "A" || got["docstatus"] != 1 {
		t.Fatalf("after SetValues: %v", got)
	}
	if len(b.hook.events()) != before {
		t.Fatalf("SetValues ran hooks: %v", b.hook.events()[before:])
	}
	for values, want := range map[string]map[string]any{
		"cannot be":              {"status": "Lost"},
		"must be a whole number": {"count": "x"},
		`no field "items"`:       {"items": []any{}},
		`no field "nope"`:        {"nope": 1},
	} {
		err := b.svc.SetValues(ctx, nil, b.org.ID, "Invoice", name, want)
		wantExc(t, err, apperr.Invalid, docframe.ExcValidation, values)
	}
	got, _ = b.svc.Get(ctx, b.admin, b.org.ID, "Invoice", name)
	if got["status"] != "Paid" || got["count"] != int64(7) {
		t.Fatalf("a refused SetValues changed the document: %v", got)
	}
	err = b.svc.SetValues(ctx, nil, uuid.New(), "Invoice", name, map[string]any{"status": "Paid"})
	testfactoryWantNotFound(t, err)
	err = b.svc.SetValues(ctx, nil, b.org.ID, "Invoice", "INV-none", map[string]any{"status": "Paid"})
	testfactoryWantNotFound(t, err)
}

func testfactoryWantNotFound(t *testing.T, err error) {
	t.Helper()
	if !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("error %v, want not found", err)
	}
}
