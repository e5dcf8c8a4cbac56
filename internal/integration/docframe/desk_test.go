package docframe_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/integration/docframe"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// The desk's list names the DocTypes the caller may read (no child tables)
// with the caller's rights: DocPerm rows for a role, everything for the
// Admin, read only where a DocType has no rows, the core permissions on a
// guarded DocType; submit and cancel only on submittable ones. A missing
// built-in DocType is created first, except under WithoutBuiltIn.
func TestDeskDoctypesAnswerTheCallersRights(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	var svc *docframe.Service
	svc, err := docframe.New(f.DB, f.Box, docframe.Options{Log: testenv.Quiet(), BuiltInNames: []string{"Gadget"},
		Guards: []docframe.Guard{{Doctype: "Gadget", Rights: map[string]string{docframe.PermRead: "gadgets:read"}}},
		BuiltIn: func(ctx context.Context, orgID uuid.UUID, doctype string) (bool, error) {
			if doctype != "Gadget" {
				return false, nil
			}
			return true, svc.EnsureDocType(ctx, orgID, docframe.DocType{Name: "Gadget", Fields: []docframe.Field{
				{Fieldname: "label", Fieldtype: "Data"}}})
		}})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{svc: svc, f: f, org: org, admin: docframe.Actor{UserID: uuid.New(), Email: "admin@example.test", Role: "Admin"}}
	ctx := context.Background()
	if got, err := svc.DeskDoctypes(docframe.WithoutBuiltIn(ctx), b.admin, org.ID); err != nil || len(got) != 0 {
		t.Fatalf("without built-in: %+v %v", got, err)
	}
	b.invoiceTypes(t)

	byName := func(a docframe.Actor) map[string]docframe.DeskRights {
		t.Helper()
		list, err := svc.DeskDoctypes(ctx, a, org.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]docframe.DeskRights{}
		for _, d := range list {
			out[d.Name] = d.Rights
		}
		return out
	}
	all := docframe.DeskRights{Read: 1, Write: 1, Create: 1, Delete: 1, Submit: 1, Cancel: 1}
	admin := byName(b.admin)
	if len(admin) != 3 || admin["Invoice"] != all || admin["Gadget"] != (docframe.DeskRights{Read: 1, Write: 1, Create: 1, Delete: 1}) {
		t.Errorf("admin: %+v (want Customer, Gadget, Invoice; no child table; no submit on Gadget)", admin)
	}
	mgr := byName(docframe.Actor{Email: "m@example.test", Role: "Manager", Perms: perms{"gadgets:read"}})
	if mgr["Invoice"] != (docframe.DeskRights{Read: 1, Write: 1, Create: 1, Submit: 1}) || mgr["Customer"] != (docframe.DeskRights{Read: 1}) ||
		mgr["Gadget"] != (docframe.DeskRights{Read: 1}) {
		t.Errorf("manager: %+v", mgr)
	}
	auditor := byName(docframe.Actor{Email: "a@example.test", Role: "Auditor"})
	if _, ok := auditor["Invoice"]; ok || len(auditor) != 1 || auditor["Customer"] != (docframe.DeskRights{Read: 1}) {
		t.Errorf("auditor (no Invoice rows, no gadgets:read): %+v", auditor)
	}
}
