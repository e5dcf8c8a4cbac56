package docframe

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/apperr"
)

// The fuzz targets of the resource API's list parameters: filters and
// or_filters, fields, order_by, parsed against a DocType with a field of
// every kind and a guarded secret. What they check, whatever the input:
// no panic; a refusal is a 417 ValidationError; no input text reaches the
// SQL (only the DocType's own expressions, operators and placeholders);
// one placeholder per argument; the same input gives the same SQL; the
// object form of equality filters is the list form's equal; selections and
// orders name only the DocType's fields, never a secret.

func fuzzSource() *source {
	dt := DocType{Name: "Fuzz Order", TitleField: "title", SearchFields: "status, qty", Fields: []Field{
		{Fieldname: "title", Fieldtype: TypeData}, {Fieldname: "qty", Fieldtype: TypeInt}, {Fieldname: "amount", Fieldtype: TypeCurrency},
		{Fieldname: "paid", Fieldtype: TypeCheck}, {Fieldname: "day", Fieldtype: TypeDate}, {Fieldname: "at", Fieldtype: TypeDatetime},
		{Fieldname: "status", Fieldtype: TypeSelect, Options: "Open\nPaid"}, {Fieldname: "customer", Fieldtype: TypeLink, Options: "Customer"},
		{Fieldname: "payload", Fieldtype: TypeJSON}, {Fieldname: "pin", Fieldtype: TypeData}, {Fieldname: "pass", Fieldtype: TypePassword},
		{Fieldname: "items", Fieldtype: TypeTable, Options: "Fuzz Item"}, {Fieldname: "sec", Fieldtype: "Section Break"},
	}}
	m := newMeta(dt)
	m.guard = &Guard{Doctype: dt.Name, Secrets: []string{"pin"}}
	return documentSource(uuid.MustParse("00000000-0000-0000-0000-00000000f022"), m)
}

// wantValidation fails unless err is a 417 ValidationError.
func wantValidation(t *testing.T, what string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Exc != ExcValidation || !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("%s: refusal %v (%T) is not a ValidationError", what, err, err)
	}
}

var (
	castRE      = regexp.MustCompile(`CAST\(\? AS numeric\)`)
	sqlShapeRE  = regexp.MustCompile(`^[A-Z\s()?,=<>!]*$`)
	placeholder = regexp.MustCompile(`\?`)
)

// residue is sql with the source's own expressions taken out, longest
// first: what remains must be keywords, operators and placeholders.
func residue(src *source, sql string) string {
	var known []string
	known = append(known, src.scope)
	for _, c := range src.columns {
		known = append(known, c.expr, c.text)
	}
	slices.SortFunc(known, func(a, b string) int { return len(b) - len(a) })
	for _, k := range known {
		sql = strings.ReplaceAll(sql, k, " ")
	}
	sql = strings.ReplaceAll(sql, "<> ''", "<> ")
	return castRE.ReplaceAllString(sql, "?")
}

func FuzzListFilters(f *testing.F) {
	for _, seed := range [][2]string{
		{`[["title", "=", "x"]]`, ``},
		{`{"status": "Paid", "qty": [">", 5]}`, `[["amount", "between", [1, 2]]]`},
		{`[["Fuzz Order", "day", "between", ["2026-01-01", "2026-02-01"]], ["at", "<=", "2026-01-01"]]`, ``},
		{`[["customer", "in", "a, b,c"], ["paid", "=", true], ["payload", "is", "set"]]`, `[["title", "like", "%x'; drop table x; --%"]]`},
		{`[["title", "not in", []], ["qty", "!=", null], ["status", "not like", "P"]]`, `{"title": ["is", "not set"]}`},
		{`[["pin", "=", "1"]]`, ``},
		{`[["pass", "=", "1"]]`, `[["items", "=", 1]]`},
		{`[["tabFuzz Order.title", "=", 1]]`, `[["title"]]`},
		{`{"qty": ["in", [1, "2", 3.5]]}`, `null`},
		{`[["title", "=", "a"], ["title", "=", "b"]]`, `{"title": "\u0000"}`},
	} {
		f.Add(seed[0], seed[1])
	}
	src := fuzzSource()
	f.Fuzz(func(t *testing.T, filters, orFilters string) {
		q, err := src.build(ListArgs{Filters: filters, OrFilters: orFilters})
		if err != nil {
			wantValidation(t, "filters", err)
			return
		}
		sql := strings.Join(q.where, " AND ")
		if n := len(placeholder.FindAllString(sql, -1)); n != len(q.args) {
			t.Fatalf("%d placeholders for %d arguments: %s", n, len(q.args), sql)
		}
		if r := residue(src, sql); !sqlShapeRE.MatchString(r) {
			t.Fatalf("input text reached the SQL: %q (from %q)", r, sql)
		}
		again, err := src.build(ListArgs{Filters: filters, OrFilters: orFilters})
		if err != nil || strings.Join(again.where, " AND ") != sql || fmt.Sprint(again.args) != fmt.Sprint(q.args) {
			t.Fatalf("not deterministic: %v %v", again, err)
		}
		// An object of plain values is the list of its equalities, in key
		// order.
		dec := json.NewDecoder(strings.NewReader(filters))
		dec.UseNumber()
		var obj map[string]any
		if dec.Decode(&obj) != nil || obj == nil {
			return
		}
		var list [][]any
		for _, k := range sortedKeys(obj) {
			if _, isList := obj[k].([]any); isList {
				return
			}
			list = append(list, []any{k, "=", obj[k]})
		}
		b, _ := json.Marshal(list)
		asList, err := src.build(ListArgs{Filters: string(b), OrFilters: orFilters})
		if err != nil || strings.Join(asList.where, " AND ") != sql || fmt.Sprint(asList.args) != fmt.Sprint(q.args) {
			t.Fatalf("object %s and list %s differ: %v / %v (%v)", filters, b, asList, q, err)
		}
	})
}

func FuzzListFields(f *testing.F) {
	for _, seed := range []string{``, `["*"]`, `name, title ,qty`, `["title", "title", "id", "doctype", "idx"]`, "[\"`tabFuzz Order`.`amount`\"]",
		`["Fuzz Order.*"]`, `["pin"]`, `["has_pin", "pass"]`, `["items"]`, `["sec"]`, `["tabOther.x"]`, `[1]`, `["title; drop table x"]`, `,,`} {
		f.Add(seed)
	}
	src := fuzzSource()
	allowed := append(slices.Clone(src.all), "id", "doctype", "idx")
	f.Fuzz(func(t *testing.T, fields string) {
		got, err := src.selection(fields)
		if err != nil {
			wantValidation(t, "fields", err)
			return
		}
		if len(got) == 0 {
			t.Fatalf("%q selects nothing", fields)
		}
		seen := map[string]bool{}
		for _, name := range got {
			if !slices.Contains(allowed, name) || name == "pin" {
				t.Fatalf("%q selects %q", fields, name)
			}
			if seen[name] {
				t.Fatalf("%q selects %q twice", fields, name)
			}
			seen[name] = true
		}
		if again, _ := src.selection(fields); !slices.Equal(again, got) {
			t.Fatalf("not deterministic: %v %v", got, again)
		}
	})
}

func FuzzListOrderBy(f *testing.F) {
	for _, seed := range []string{``, `modified desc`, `qty asc, title`, "`tabFuzz Order`.`amount` DESC", `name`, `pin desc`, `pass`,
		`items asc`, `(select 1)`, `title sideways`, `title asc desc`, `, ,`, `day,at,paid desc,creation`} {
		f.Add(seed)
	}
	src := fuzzSource()
	exprs := map[string]bool{}
	for name, c := range src.columns {
		if name != "pin" {
			exprs[c.expr] = true
		}
	}
	f.Fuzz(func(t *testing.T, orderBy string) {
		got, err := src.orderBy(orderBy)
		if err != nil {
			wantValidation(t, "order_by", err)
			return
		}
		parts := strings.Split(got, ", ")
		for _, p := range parts {
			expr, dir, ok := cutLast(p, " ")
			if !ok || (dir != "ASC" && dir != "DESC") || !exprs[expr] {
				t.Fatalf("%q orders by %q", orderBy, got)
			}
		}
		// Ties are broken by name: pages are stable.
		if !slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, "name ") }) {
			t.Fatalf("%q: %q does not end ties by name", orderBy, got)
		}
		if again, _ := src.orderBy(orderBy); again != got {
			t.Fatalf("not deterministic: %q %q", got, again)
		}
	})
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
