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

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/phone"
)

// The fuzz targets of the resource API's list parameters: filters and
// or_filters, fields, order_by, search_term, parsed against a DocType with a
// field of every kind, a guarded secret, and a guarded number (mobile) and
// name (who), for a caller whose organization masks numbers and one whose
// does not. What they check, whatever the input: no panic; a refusal is a
// 417 ValidationError; no input text reaches the SQL (only the DocType's
// own expressions, operators and placeholders); one placeholder per
// argument; the same input gives the same SQL; the object form of equality
// filters is the list form's equal; selections and orders name only the
// DocType's fields, never a secret. Masked (masking.go): a number field is
// compared only whole (=, <>, IN with normalised numbers) or for being set,
// never by pattern, range or order; a name field by pattern only when the
// pattern is not made of phone characters, never by range or order; at most
// MaxMaskedNumbers whole numbers a request; masking refuses more and changes
// nothing that does not touch a masked field.

// The masked fields' expressions (valueExpr and textExpr of Data fields).
const (
	mobileExpr = "(data ->> 'mobile')"
	whoExpr    = "(data ->> 'who')"
)

func fuzzSource(masked bool) *source {
	dt := DocType{Name: "Fuzz Order", TitleField: "title", SearchFields: "status, qty, mobile, who", Fields: []Field{
		{Fieldname: "title", Fieldtype: TypeData}, {Fieldname: "qty", Fieldtype: TypeInt}, {Fieldname: "amount", Fieldtype: TypeCurrency},
		{Fieldname: "paid", Fieldtype: TypeCheck}, {Fieldname: "day", Fieldtype: TypeDate}, {Fieldname: "at", Fieldtype: TypeDatetime},
		{Fieldname: "status", Fieldtype: TypeSelect, Options: "Open\nPaid"}, {Fieldname: "customer", Fieldtype: TypeLink, Options: "Customer"},
		{Fieldname: "payload", Fieldtype: TypeJSON}, {Fieldname: "pin", Fieldtype: TypeData}, {Fieldname: "pass", Fieldtype: TypePassword},
		{Fieldname: "items", Fieldtype: TypeTable, Options: "Fuzz Item"}, {Fieldname: "sec", Fieldtype: "Section Break"},
		{Fieldname: "mobile", Fieldtype: TypeData}, {Fieldname: "who", Fieldtype: TypeData},
	}}
	m := newMeta(dt)
	m.guard = &Guard{Doctype: dt.Name, Secrets: []string{"pin"}, Phones: []string{"mobile"}, Names: []string{"who"}}
	return documentSource(uuid.MustParse("00000000-0000-0000-0000-00000000f022"), m, Actor{Role: "Agent", MaskPhones: masked})
}

// checkMaskedConds fails unless conds compare the masked fields only as
// masking.go allows.
func checkMaskedConds(t *testing.T, conds []cond) {
	t.Helper()
	for _, c := range conds {
		// One filter's SQL: its column's expression, operators, placeholders.
		ops := strings.NewReplacer(mobileExpr, "", whoExpr, "", "<>", "").Replace(c.sql)
		ranged := strings.ContainsAny(ops, "<>") || strings.Contains(ops, "BETWEEN")
		if strings.Contains(c.sql, mobileExpr) {
			if ranged || strings.Contains(c.sql, "LIKE") {
				t.Fatalf("a masked number compared by range or pattern: %s %v", c.sql, c.args)
			}
			for _, a := range c.args {
				if s, ok := a.(string); !ok || !isE164(s) {
					t.Fatalf("a masked number compared with %#v, not a whole normalised number: %s", a, c.sql)
				}
			}
			if c.numbers != len(c.args) {
				t.Fatalf("%s compares %d numbers, counted %d", c.sql, len(c.args), c.numbers)
			}
		}
		if strings.Contains(c.sql, whoExpr) {
			if ranged {
				t.Fatalf("a masked name compared by range: %s %v", c.sql, c.args)
			}
			if strings.Contains(c.sql, "LIKE") {
				if s, _ := c.args[0].(string); phone.NumberLike(likeLiterals(s)) {
					t.Fatalf("a masked name matched by the phone-like pattern %q", s)
				}
			}
		}
	}
}

func isE164(s string) bool {
	n, err := phone.Normalize(s)
	return err == nil && n == s
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
	plain, masked := fuzzSource(false), fuzzSource(true)
	f.Fuzz(func(t *testing.T, filters, orFilters string) {
		q, err := masked.build(ListArgs{Filters: filters, OrFilters: orFilters})
		if err != nil {
			wantValidation(t, "masked filters", err)
		} else {
			and, err1 := masked.parseFilters("filters", filters)
			or, err2 := masked.parseFilters("or_filters", orFilters)
			if err1 != nil || err2 != nil {
				t.Fatalf("built, yet its parts are refused: %v %v", err1, err2)
			}
			checkMaskedConds(t, append(and, or...))
			numbers := 0
			for _, c := range append(and, or...) {
				numbers += c.numbers
			}
			if numbers > MaxMaskedNumbers {
				t.Fatalf("%d whole numbers compared in one request", numbers)
			}
		}
		unmasked, uerr := plain.build(ListArgs{Filters: filters, OrFilters: orFilters})
		switch {
		case uerr != nil && err == nil:
			t.Fatalf("masking admitted what is refused unmasked: %v", uerr)
		case uerr == nil && err != nil:
			if sql := strings.Join(unmasked.where, " AND "); !strings.Contains(sql, mobileExpr) && !strings.Contains(sql, whoExpr) {
				t.Fatalf("masking refused filters that compare no masked field: %s (%v)", sql, err)
			}
		case uerr == nil && err == nil:
			a, b := strings.Join(unmasked.where, " AND "), strings.Join(q.where, " AND ")
			if !strings.Contains(a, mobileExpr) && (a != b || fmt.Sprint(unmasked.args) != fmt.Sprint(q.args)) {
				t.Fatalf("masking changed filters on other fields: %s %v / %s %v", a, unmasked.args, b, q.args)
			}
		}
		for _, src := range []*source{plain, masked} {
			checkFilters(t, src, filters, orFilters)
		}
	})
}

// checkFilters checks the properties of filters that hold with and
// without masking.
func checkFilters(t *testing.T, src *source, filters, orFilters string) {
	t.Helper()
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
}

func FuzzListFields(f *testing.F) {
	for _, seed := range []string{``, `["*"]`, `name, title ,qty`, `["title", "title", "id", "doctype", "idx"]`, "[\"`tabFuzz Order`.`amount`\"]",
		`["Fuzz Order.*"]`, `["pin"]`, `["has_pin", "pass"]`, `["items"]`, `["sec"]`, `["tabOther.x"]`, `[1]`, `["title; drop table x"]`, `,,`} {
		f.Add(seed)
	}
	src := fuzzSource(true)
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
		`items asc`, `(select 1)`, `title sideways`, `title asc desc`, `, ,`, `day,at,paid desc,creation`, `mobile`, "title, `tabFuzz Order`.who desc"} {
		f.Add(seed)
	}
	plain, masked := fuzzSource(false), fuzzSource(true)
	exprs := map[string]bool{}
	for name, c := range plain.columns {
		if name != "pin" {
			exprs[c.expr] = true
		}
	}
	f.Fuzz(func(t *testing.T, orderBy string) {
		got, err := masked.orderBy(orderBy)
		if err == nil && (strings.Contains(got, mobileExpr) || strings.Contains(got, whoExpr)) {
			t.Fatalf("%q orders by a masked field: %q", orderBy, got)
		}
		unmasked, uerr := plain.orderBy(orderBy)
		switch {
		case uerr != nil && err == nil:
			t.Fatalf("masking admitted an order refused unmasked: %v", uerr)
		case uerr == nil && err == nil && got != unmasked:
			t.Fatalf("masking changed the order: %q / %q", unmasked, got)
		case uerr == nil && err != nil && !strings.Contains(unmasked, mobileExpr) && !strings.Contains(unmasked, whoExpr):
			t.Fatalf("masking refused an order by no masked field: %q (%v)", unmasked, err)
		}
		for _, src := range []*source{plain, masked} {
			got, err := src.orderBy(orderBy)
			if err != nil {
				wantValidation(t, "order_by", err)
				continue
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
		}
	})
}

// FuzzListSearch: search_term is only ever an argument; unmasked it is
// looked for in the name and every search field; masked, a number field
// is compared only with the whole number the term is, and a name field is
// searched only by a term that is not made of phone characters.
func FuzzListSearch(f *testing.F) {
	for _, seed := range []string{`Ann`, `5501`, `+1 (555) 018-0001`, `15550180001`, `%`, `_5_`, `\5`, `555#`, `'; drop table x; --`, ` `,
		`0044 20 7946 0958`} {
		f.Add(seed)
	}
	plain, masked := fuzzSource(false), fuzzSource(true)
	f.Fuzz(func(t *testing.T, term string) {
		term = strings.TrimSpace(term)
		if term == "" {
			return // no search (build skips it)
		}
		for _, src := range []*source{plain, masked} {
			c := src.searchCondition(term)
			if n := len(placeholder.FindAllString(c.sql, -1)); n != len(c.args) {
				t.Fatalf("%d placeholders for %d arguments: %s", n, len(c.args), c.sql)
			}
			if r := residue(src, c.sql); !sqlShapeRE.MatchString(r) {
				t.Fatalf("input text reached the SQL: %q (from %q)", r, c.sql)
			}
			q, err := src.build(ListArgs{SearchTerm: term})
			if err != nil || q.where[len(q.where)-1] != c.sql {
				t.Fatalf("build: %v %v", q, err)
			}
		}
		like := paging.Contains(term)
		if c := plain.searchCondition(term); len(c.args) != 1+len(plain.search) || slices.ContainsFunc(c.args, func(a any) bool { return a != like }) {
			t.Fatalf("unmasked search %s %v", c.sql, c.args)
		}
		c := masked.searchCondition(term)
		whole, err := phone.Normalize(term)
		wantNumber := phone.NumberLike(term) && err == nil
		if got := strings.Contains(c.sql, mobileExpr+" = ?"); got != wantNumber || strings.Contains(c.sql, mobileExpr+" ILIKE") {
			t.Fatalf("masked search for %q compares the number as %s", term, c.sql)
		}
		if wantNumber && (!slices.Contains(c.args, any(whole)) || c.numbers != 1) {
			t.Fatalf("masked search for %q: %v (%d numbers)", term, c.args, c.numbers)
		}
		if strings.Contains(c.sql, whoExpr) == phone.NumberLike(term) {
			t.Fatalf("masked search for %q searches the name as %s", term, c.sql)
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
