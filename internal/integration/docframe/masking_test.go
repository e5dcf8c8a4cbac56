package docframe_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// With masking on, a list compares a guarded DocType's masked number only
// whole and its masked name never by a phone-like pattern, range or order
// (masking.go), whichever way it is asked: filters, or_filters,
// search_term, order_by, counts. Without masking every form works as
// before. (The resource API's routes are tested end to end in
// e2e/wharfmask_test.go; this test covers the name rule, which no built-in
// DocType has outside a child table.)
func TestMaskedFieldsCompareOnlyWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org().ID
	svc, err := docframe.New(f.DB, f.Box, docframe.Options{Log: testenv.Quiet(), Guards: []docframe.Guard{
		{Doctype: "Card", Rights: map[string]string{docframe.PermRead: "cards:read"}, Phones: []string{"mobile"}, Names: []string{"who"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.EnsureDocType(ctx, org, docframe.DocType{Name: "Card", Autoname: "field:title", TitleField: "title",
		SearchFields: "mobile, who", Fields: []docframe.Field{{Fieldname: "title", Fieldtype: "Data"},
			{Fieldname: "mobile", Fieldtype: "Data"}, {Fieldname: "who", Fieldtype: "Data"}}}); err != nil {
		t.Fatal(err)
	}
	admin := docframe.Actor{Email: "admin@example.test", Role: "Admin"}
	for _, in := range []map[string]any{
		{"title": "Ann", "mobile": "+15551234567", "who": "+1 555 123 4567"},
		{"title": "Bob", "mobile": "+15557654321", "who": "Bob Lee"},
	} {
		if _, err := svc.Insert(ctx, admin, org, "Card", in); err != nil {
			t.Fatal(err)
		}
	}
	reader := docframe.Actor{Email: "r@example.test", Role: "Agent", Perms: perms{"cards:read"}}
	masked := reader
	masked.MaskPhones = true
	list := func(a docframe.Actor, args docframe.ListArgs) (string, error) {
		args.Limit = -1
		if args.OrderBy == "" {
			args.OrderBy = "title"
		}
		rows, err := svc.List(ctx, a, org, "Card", args)
		var names []string
		for _, r := range rows {
			names = append(names, r.(map[string]any)["name"].(string))
		}
		return strings.Join(names, ","), err
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprintf(`"+1555123456%d"`, i%10)
	}

	refused := map[string]docframe.ListArgs{
		"mobile is masked (mask_phone_numbers): like would reveal masked digits":     {Filters: `[["mobile", "like", "%1234%"]]`},
		"mobile is masked (mask_phone_numbers): not like would reveal masked digits": {Filters: `{"mobile": ["not like", "+1555%"]}`},
		"mobile is masked (mask_phone_numbers): > would reveal masked digits":        {Filters: `[["mobile", ">", "+15553"]]`},
		"mobile is masked (mask_phone_numbers): <= would reveal":                     {OrFilters: `[["title", "=", "x"], ["mobile", "<=", "+15553"]]`},
		"mobile is masked (mask_phone_numbers): between would reveal":                {Filters: `[["mobile", "between", ["+1555", "+1556"]]]`},
		`and "1234" is not one`:                               {Filters: `[["mobile", "=", "1234"]]`},
		`and "+155******67" is not one`:                       {Filters: `[["mobile", "in", ["+15551234567", "+155******67"]]]`},
		"mobile is masked (mask_phone_numbers): lists cannot": {OrderBy: "mobile desc"},
		"who is masked (mask_phone_numbers): lists cannot":    {OrderBy: "title, `tabCard`.`who`"},
		"who is masked (mask_phone_numbers): a like pattern made only of digits and phone punctuation": {
			Filters: `[["who", "like", "%123 4%"]]`},
		"who is masked (mask_phone_numbers): a not like pattern": {Filters: `[["who", "not like", "+1 5\\5%"]]`},
		"who is masked (mask_phone_numbers): < would reveal":     {Filters: `[["who", "<", "+1 6"]]`},
		"can be compared with at most 10 whole numbers in one request, not 11": {
			Filters: `[["mobile", "in", [` + strings.Join(eleven, ",") + `]]]`},
		"at most 10 whole numbers in one request, not 12": {Filters: `[["mobile", "in", [` + strings.Join(eleven[:10], ",") + `]]]`,
			OrFilters: `[["who", "=", "+1 555 123 4567"]]`, SearchTerm: "+15557654321"},
	}
	for msg, args := range refused {
		_, err := list(masked, args)
		wantExc(t, err, apperr.Invalid, docframe.ExcValidation, msg)
		_, err = svc.Count(ctx, masked, org, "Card", args)
		if args.OrderBy == "" { // a count has no order
			wantExc(t, err, apperr.Invalid, docframe.ExcValidation, msg)
		}
		// Unmasked the same list is answered (the cap and the whole-number
		// rule are masking's alone).
		if _, err := list(reader, args); err != nil {
			t.Errorf("unmasked %+v: %v", args, err)
		}
	}

	for _, c := range []struct {
		args     docframe.ListArgs
		masked   string // the names found with masking on
		unmasked string // and off
	}{
		// Whole numbers, normalised as the core normalises them.
		{docframe.ListArgs{Filters: `[["mobile", "=", "+1 (555) 123-4567"]]`}, "Ann", ""},
		{docframe.ListArgs{Filters: `{"mobile": "+15551234567"}`}, "Ann", "Ann"},
		{docframe.ListArgs{Filters: `[["mobile", "in", "15551234567, 0015557654321"]]`}, "Ann,Bob", ""},
		{docframe.ListArgs{Filters: `[["mobile", "not in", [15557654321]]]`}, "Ann", "Ann,Bob"}, // unmasked: compared as written
		{docframe.ListArgs{Filters: `[["mobile", "!=", "+15551234567"]]`}, "Bob", "Bob"},
		{docframe.ListArgs{Filters: `[["mobile", "is", "set"]]`}, "Ann,Bob", "Ann,Bob"},
		{docframe.ListArgs{Filters: `[["mobile", "=", null]]`}, "", ""},
		{docframe.ListArgs{Filters: `[["mobile", "in", [` + strings.Join(eleven[:10], ",") + `]]]`}, "Ann", "Ann"},
		// Fragments and patterns: unmasked only.
		{docframe.ListArgs{Filters: `[["mobile", "like", "%1234%"]]`}, "-", "Ann"},
		{docframe.ListArgs{OrFilters: `[["mobile", ">", "+15553"], ["title", "=", "x"]]`}, "-", "Bob"},
		{docframe.ListArgs{OrderBy: "mobile desc"}, "-", "Bob,Ann"},
		// A name: whole values, and patterns that can match no number.
		{docframe.ListArgs{Filters: `[["who", "=", "+1 555 123 4567"]]`}, "Ann", "Ann"},
		{docframe.ListArgs{Filters: `[["who", "like", "%lee%"]]`}, "Bob", "Bob"},
		{docframe.ListArgs{Filters: `[["who", "not like", "B%"]]`}, "Ann", "Ann"},
		{docframe.ListArgs{Filters: `[["who", "like", "+_ ___ ___ ____"]]`}, "Ann", "Ann"}, // the mask shows as much
		{docframe.ListArgs{Filters: `[["who", "like", "%123 4%"]]`}, "-", "Ann"},
		// search_term: a number only whole; a name only by a term that is
		// not made of phone characters; unmasked, anything anywhere.
		{docframe.ListArgs{SearchTerm: "+1 555 123 4567"}, "Ann", "Ann"},
		{docframe.ListArgs{SearchTerm: "1234"}, "", "Ann"},
		{docframe.ListArgs{SearchTerm: "555"}, "", "Ann,Bob"},
		{docframe.ListArgs{SearchTerm: "lee"}, "Bob", "Bob"},
		{docframe.ListArgs{SearchTerm: "An"}, "Ann", "Ann"},
	} {
		for _, run := range []struct {
			a    docframe.Actor
			want string
		}{{masked, c.masked}, {reader, c.unmasked}} {
			got, err := list(run.a, c.args)
			if run.want == "-" {
				wantExc(t, err, apperr.Invalid, docframe.ExcValidation, "is masked (mask_phone_numbers)")
				continue
			}
			if err != nil || got != run.want {
				t.Errorf("%+v masked=%v: %q %v, want %q", c.args, run.a.MaskPhones, got, err, run.want)
			}
			n, err := svc.Count(ctx, run.a, org, "Card", docframe.ListArgs{Filters: c.args.Filters, OrFilters: c.args.OrFilters})
			if want := len(slices.DeleteFunc(strings.Split(run.want, ","), func(s string) bool { return s == "" })); c.args.SearchTerm == "" &&
				(err != nil || int(n) != want) {
				t.Errorf("count %+v masked=%v: %d %v, want %d", c.args, run.a.MaskPhones, n, err, want)
			}
		}
	}
}
