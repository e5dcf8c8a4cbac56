package notify

import (
	"reflect"
	"testing"
)

// TestPrintLabels: labels are derived from keys, which a script's
// doc._data_list objects may choose freely: an empty key (no name to
// label) is left out, and a key starting with a multi-byte letter gets
// that letter capitalised, not its first byte cut.
func TestPrintLabels(t *testing.T) {
	t.Parallel()
	p := printOf("Order", "SO-1", map[string]any{"": "nameless", "état_civil": "marié", "amount": int64(3), "_hidden": "x", "owner": "a@b"})
	want := []PrintLine{{Label: "Amount", Value: "3"}, {Label: "État civil", Value: "marié"}}
	if p.Title != "Order SO-1" || !reflect.DeepEqual(p.Lines, want) {
		t.Fatalf("print %+v, want lines %+v", p, want)
	}
	if pdf := renderPDF(p); len(pdf) == 0 {
		t.Fatal("no PDF")
	}
}
