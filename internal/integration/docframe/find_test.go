package docframe_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/integration/docframe"
)

// Find selects documents by their fields' text, in one organization or
// across all, with their values, oldest first or by organization and name;
// a name that is no field name is refused.
func TestFindSelectsByFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	other := b.f.Org()
	def := `{"name": "Reminder", "fields": [{"fieldname": "kind", "fieldtype": "Data", "search_index": 1},
		{"fieldname": "ref", "fieldtype": "Data"}, {"fieldname": "disabled", "fieldtype": "Check"}]}`
	for _, org := range []uuid.UUID{b.org.ID, other.ID} {
		if _, err := b.svc.SaveDocType(ctx, b.admin, org, "", obj(t, def), true); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(org uuid.UUID, body string) string {
		t.Helper()
		d, err := b.svc.InsertDoc(ctx, org, "Administrator", "Reminder", obj(t, body))
		if err != nil {
			t.Fatal(err)
		}
		return d.Name
	}
	a1 := insert(b.org.ID, `{"kind": "a", "ref": "x"}`)
	a2 := insert(b.org.ID, `{"kind": "b"}`)
	insert(b.org.ID, `{"kind": "a", "disabled": 1}`)
	c1 := insert(other.ID, `{"kind": "c", "ref": ""}`)
	names := func(found []docframe.Found) []string {
		var out []string
		for _, d := range found {
			out = append(out, fmt.Sprintf("%s/%s%v", map[bool]string{true: "org", false: "other"}[d.OrganizationID == b.org.ID], d.Name, d.Values))
		}
		return out
	}
	find := func(f docframe.Filter) []string {
		t.Helper()
		f.Doctype = "Reminder"
		found, err := b.svc.Find(ctx, nil, f)
		if err != nil {
			t.Fatal(err)
		}
		return names(found)
	}
	for _, c := range []struct {
		f    docframe.Filter
		want []string
	}{
		{docframe.Filter{OrganizationID: b.org.ID, Equal: map[string][]string{"kind": {"a", "b"}}, Unchecked: []string{"disabled"}},
			[]string{"org/" + a1 + "[]", "org/" + a2 + "[]"}},
		{docframe.Filter{Equal: map[string][]string{"kind": {"a", "c"}}, Blank: []string{"ref"}, Unchecked: []string{"disabled"},
			Values: []string{"kind", "ref"}}, []string{"other/" + c1 + "[c ]"}},
		{docframe.Filter{Equal: map[string][]string{"kind": {}}}, nil},
		{docframe.Filter{Unchecked: []string{"disabled"}, Oldest: true, Limit: 2, Values: []string{"kind"}},
			[]string{"org/" + a1 + "[a]", "org/" + a2 + "[b]"}},
		{docframe.Filter{CreatedAfter: time.Now().Add(time.Hour)}, nil},
	} {
		got := find(c.f)
		if !c.f.Oldest { // by organization and name: names are hashes
			slices.Sort(got)
			slices.Sort(c.want)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
	if got := len(find(docframe.Filter{CreatedBefore: time.Now().Add(time.Hour)})); got != 4 {
		t.Errorf("created before an hour from now: %d documents, want 4", got)
	}
	if _, err := b.svc.Find(ctx, nil, docframe.Filter{Doctype: "Reminder", Blank: []string{"ref'; --"}}); err == nil {
		t.Error("a field name with SQL in it was accepted")
	}
}
