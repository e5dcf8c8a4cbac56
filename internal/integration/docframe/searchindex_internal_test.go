package docframe

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// Only a custom DocType with search fields gets the trigram search index:
// a built-in one (written on the core's hot paths) and one that searches
// its name alone get none.
func TestSearchIndexOnlyForCustomDocTypesWithSearchFields(t *testing.T) {
	org := uuid.New()
	def := func(custom Flag, title, search string) *DocType {
		return &DocType{Name: "Order", Custom: custom, TitleField: title, SearchFields: search,
			Fields: []Field{{Fieldname: "note", Fieldtype: "Data"}, {Fieldname: "customer", Fieldtype: "Data"}}}
	}
	gin := func(dt *DocType) int {
		n := 0
		for _, ix := range fieldIndexes(org, dt) {
			if ix.method == "gin" && strings.Contains(ix.columns, "gin_trgm_ops") {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name string
		dt   *DocType
		want int
	}{
		{"custom, search fields", def(1, "", "note,customer"), 1},
		{"custom, title field", def(1, "customer", ""), 1},
		{"custom, name alone", def(1, "", ""), 0},
		{"built in, search fields", def(0, "customer", "note"), 0},
	} {
		if got := gin(c.dt); got != c.want {
			t.Errorf("%s: %d search indexes, want %d", c.name, got, c.want)
		}
	}
}
