package dataops

import (
	"slices"
	"strings"

	"wharf/internal/infra/apperr"
)

// plan places the table's import columns in the file: the index of the
// header each column is read from (absent: not in the file).
type plan map[string]int

// planImport matches the file's headers to t's import columns. A
// column_mapping entry (header -> column) must name a header of the file
// and a column of t; the other headers match a column by their lower-cased
// text, equal to the column's key or lower-cased label; headers that match
// nothing are ignored. A column given by two headers, or a required column
// given by none, is an error.
func (t *table) planImport(header []string, mapping map[string]string) (plan, error) {
	cols := t.importColumns()
	p := plan{}
	from := map[string]string{}     // column -> the header it is read from
	mapped := map[int]bool{}        // headers the mapping placed
	viaMapping := map[string]bool{} // columns the mapping placed
	for h, key := range mapping {
		i := slices.Index(header, strings.TrimSpace(h))
		if i < 0 {
			i = slices.IndexFunc(header, func(x string) bool { return strings.EqualFold(x, strings.TrimSpace(h)) })
		}
		if i < 0 {
			return nil, apperr.Invalidf("column_mapping: %q is not a header of the file (its headers: %s)", h, quoted(header))
		}
		if !slices.ContainsFunc(cols, func(c column) bool { return c.key == key }) {
			return nil, apperr.Invalidf("column_mapping: %q maps to %q, which is not a column of %s (columns: %s)",
				h, key, t.name, strings.Join(keysOf(cols), ", "))
		}
		if prev, ok := from[key]; ok {
			return nil, apperr.Invalidf("column_mapping: %q and %q both map to %s", prev, header[i], key)
		}
		p[key], from[key], mapped[i], viaMapping[key] = i, header[i], true, true
	}
	for i, h := range header {
		if mapped[i] {
			continue
		}
		lh := strings.ToLower(h)
		j := slices.IndexFunc(cols, func(c column) bool { return lh == c.key || lh == strings.ToLower(c.label) })
		if j < 0 {
			continue // not ours: ignored
		}
		key := cols[j].key
		if prev, ok := from[key]; ok {
			if viaMapping[key] {
				continue // the mapping chose another header for this column
			}
			return nil, apperr.Invalidf("headers %q and %q both match column %s: map one of them with column_mapping", prev, h, key)
		}
		p[key], from[key] = i, h
	}
	var missing []string
	for _, c := range cols {
		if _, ok := p[c.key]; c.imports == importRequired && !ok {
			missing = append(missing, c.key)
		}
	}
	if len(missing) > 0 {
		return nil, apperr.Invalidf("the file has no column for the required %s: name a header so, or map one with column_mapping",
			strings.Join(missing, ", "))
	}
	return p, nil
}

// cell answers a record's trimmed cell of column key ("" when the file has
// no such column or the row is shorter).
func (p plan) cell(r record, key string) string {
	i, ok := p[key]
	if !ok || i >= len(r.cells) {
		return ""
	}
	return strings.TrimSpace(r.cells[i])
}

func quoted(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = `"` + s + `"`
	}
	return strings.Join(out, ", ")
}
