package docframe_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/integration/docframe"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// perms is a caller's set of core permissions.
type perms []string

func (p perms) Can(key string) bool { return slices.Contains(p, key) }

// A guarded DocType follows the caller's core permissions, not DocPerm
// rows; masks numbers and names (its own and its child rows') for an
// actor whose organization masks them; and never answers its secrets.
func TestGuardedDocType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org().ID
	svc, err := docframe.New(f.DB, f.Box, docframe.Options{Log: testenv.Quiet(), Guards: []docframe.Guard{
		{Doctype: "Line", Phones: []string{"mobile"}, Names: []string{"who"}},
		{Doctype: "Contact Card", Rights: map[string]string{docframe.PermRead: "cards:read", docframe.PermCreate: "cards:create"},
			Phones: []string{"mobile"}, Names: []string{"who"}, Secrets: []string{"pin", "key"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	admin := docframe.Actor{UserID: uuid.New(), Email: "admin@example.test", Role: "Admin"}
	for _, def := range []docframe.DocType{
		{Name: "Line", Istable: 1, Fields: []docframe.Field{{Fieldname: "mobile", Fieldtype: "Data"}, {Fieldname: "who", Fieldtype: "Data"}}},
		{Name: "Contact Card", Autoname: "field:title", TitleField: "title", SearchFields: "mobile",
			// DocPerm rows are not what decides on a guarded DocType.
			Permissions: []docframe.DocPerm{{Role: "Agent", Read: 1, Write: 1, Create: 1, Delete: 1}},
			Fields: []docframe.Field{{Fieldname: "title", Fieldtype: "Data"}, {Fieldname: "mobile", Fieldtype: "Data"},
				{Fieldname: "who", Fieldtype: "Data"}, {Fieldname: "pin", Fieldtype: "Data"}, {Fieldname: "key", Fieldtype: "Password"},
				{Fieldname: "lines", Fieldtype: "Table", Options: "Line"}}},
	} {
		if err := svc.EnsureDocType(ctx, org, def); err != nil {
			t.Fatal(err)
		}
	}
	in := map[string]any{"title": "Ann", "mobile": "+15551234567", "who": "+1 555 123 4567", "pin": "4242", "key": "k-secret",
		"lines": []any{map[string]any{"mobile": "+15557654321", "who": "Bob"}}}
	reader := docframe.Actor{Email: "r@example.test", Role: "Agent", Perms: perms{"cards:read"}}
	wantExc(t, func() error { _, err := svc.Insert(ctx, reader, org, "Contact Card", in); return err }(), apperr.Forbidden,
		docframe.ExcPermission, "create on Contact Card for role Agent (needs the permission cards:create)")
	writer := docframe.Actor{Email: "w@example.test", Role: "Agent", Perms: perms{"cards:read", "cards:create"}}
	created, err := svc.Insert(ctx, writer, org, "Contact Card", in)
	if err != nil {
		t.Fatal(err)
	}
	// Rights: read through cards:read; none without it; write and delete,
	// which map to nothing, are the Admin's.
	nobody := docframe.Actor{Email: "n@example.test", Role: "Agent", Perms: perms{"contacts:read"}}
	for _, err := range []error{
		func() error { _, err := svc.Get(ctx, nobody, org, "Contact Card", "Ann"); return err }(),
		func() error {
			_, err := svc.List(ctx, nobody, org, "Contact Card", docframe.ListArgs{Limit: -1})
			return err
		}(),
		func() error { _, err := svc.Count(ctx, nobody, org, "Contact Card", docframe.ListArgs{}); return err }(),
		svc.Require(ctx, docframe.Actor{Role: "Agent"}, org, "Contact Card", docframe.PermRead),
	} {
		wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "read on Contact Card for role Agent (needs the permission cards:read)")
	}
	_, err = svc.Update(ctx, writer, org, "Contact Card", "Ann", map[string]any{"title": "X"})
	wantExc(t, err, apperr.Forbidden, docframe.ExcPermission, "write on Contact Card for role Agent (the organization's Admin only)")
	wantExc(t, svc.Delete(ctx, writer, org, "Contact Card", "Ann"), apperr.Forbidden, docframe.ExcPermission, "delete on Contact Card")

	// Secrets: has_ flags, in the insert's answer too.
	for _, doc := range []map[string]any{created, must(svc.Get(ctx, reader, org, "Contact Card", "Ann"))} {
		_, pin := doc["pin"]
		_, key := doc["key"]
		if pin || key || doc["has_pin"] != 1 || doc["has_key"] != 1 || doc["mobile"] != "+15551234567" || doc["who"] != "+1 555 123 4567" {
			t.Fatalf("unmasked doc %v", doc)
		}
	}
	// Masked for an organization that masks numbers, child rows too; the
	// stored values are unchanged.
	masked := reader
	masked.MaskPhones = true
	doc := must(svc.Get(ctx, masked, org, "Contact Card", "Ann"))
	line := doc["lines"].([]map[string]any)[0]
	if doc["mobile"] != phone.Mask("+15551234567") || doc["who"] != phone.MaskName("+1 555 123 4567") || doc["who"] == "+1 555 123 4567" ||
		doc["title"] != "Ann" || line["mobile"] != phone.Mask("+15557654321") || line["who"] != "Bob" {
		t.Fatalf("masked doc %v", doc)
	}
	raw, err := svc.GetDoc(ctx, nil, org, "Contact Card", "Ann")
	if err != nil || raw.Get("mobile") != "+15551234567" || raw.Get("pin") != "4242" {
		t.Fatalf("stored %v %v", raw, err)
	}
	rows := must(svc.List(ctx, masked, org, "Contact Card", docframe.ListArgs{Fields: `["*"]`, Limit: -1}))
	row := rows[0].(map[string]any)
	if _, pin := row["pin"]; pin || row["has_pin"] != 1 || row["has_key"] != 1 || row["mobile"] != phone.Mask("+15551234567") {
		t.Fatalf("list row %v", row)
	}
	asList := must(svc.List(ctx, masked, org, "Contact Card", docframe.ListArgs{Fields: `["name", "has_pin", "who"]`, AsList: true, Limit: -1}))
	if got := fmt.Sprint(asList[0]); got != fmt.Sprint([]any{"Ann", 1, phone.MaskName("+1 555 123 4567")}) {
		t.Fatalf("as_dict=0 row %s", got)
	}
	// A secret is never selected, filtered, ordered or searched.
	for args, msg := range map[*docframe.ListArgs]string{
		{Fields: `["pin"]`}:                   "pin is a secret",
		{Fields: "key"}:                       "key is a secret",
		{Filters: `[["pin", "=", "4242"]]`}:   "pin is a secret",
		{Filters: `{"pin": "4242"}`}:          "pin is a secret",
		{OrFilters: `[["pin", "like", "4"]]`}: "pin is a secret",
		{OrderBy: "pin desc"}:                 "pin is a secret",
	} {
		_, err := svc.List(ctx, admin, org, "Contact Card", *args)
		wantExc(t, err, apperr.Invalid, docframe.ExcValidation, msg)
	}
	if rows := must(svc.List(ctx, admin, org, "Contact Card", docframe.ListArgs{SearchTerm: "4242", Limit: -1})); len(rows) != 0 {
		t.Fatalf("search_term found a secret: %v", rows)
	}
	if !svc.IsSecret("Contact Card", "pin") || svc.IsSecret("Contact Card", "mobile") || svc.IsSecret("Other", "pin") {
		t.Fatal("IsSecret")
	}
	// Guards are checked at construction.
	for _, gs := range [][]docframe.Guard{{{Doctype: "A"}, {Doctype: "A"}}, {{Doctype: "A", Rights: map[string]string{"amend": "x:y"}}}} {
		if _, err := docframe.New(f.DB, f.Box, docframe.Options{Guards: gs}); err == nil || !strings.Contains(err.Error(), "guard") {
			t.Errorf("guards %v: %v", gs, err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
