package docframe

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// List limits: Frappe's default page, and the most rows one request reads
// (limit 0, Frappe's "all", means this maximum).
const (
	DefaultLimit = 20
	MaxLimit     = 1000
)

// ListArgs are a list's parameters as clients send them: fields, filters
// and or_filters as JSON (fields also as a comma list), order_by as
// "field [asc|desc], ...". Limit < 0 means the default.
type ListArgs struct {
	Fields     string
	Filters    string
	OrFilters  string
	OrderBy    string
	SearchTerm string
	Limit      int
	Offset     int
	// AsList answers rows as arrays of values in the order of Fields
	// (Frappe's as_dict=0).
	AsList bool
}

// ListArgsFrom reads a list's parameters by their Frappe names (and the
// spec's): limit or limit_page_length or page_length, offset or limit_start
// or start.
func ListArgsFrom(get func(string) string) (ListArgs, error) {
	a := ListArgs{Fields: get("fields"), Filters: get("filters"), OrFilters: get("or_filters"), OrderBy: get("order_by"),
		SearchTerm: get("search_term"), Limit: -1}
	if gb := strings.TrimSpace(get("group_by")); gb != "" {
		return a, Validationf("group_by is not supported")
	}
	num := func(names ...string) (int, bool, error) {
		for _, n := range names {
			if v := strings.TrimSpace(get(n)); v != "" {
				i, err := strconv.Atoi(v)
				if err != nil || i < 0 {
					return 0, true, Validationf("%s must be a whole number of at least 0, not %s", n, show(v))
				}
				return i, true, nil
			}
		}
		return 0, false, nil
	}
	if n, ok, err := num("limit", "limit_page_length", "page_length"); err != nil {
		return a, err
	} else if ok {
		a.Limit = n
	}
	if n, _, err := num("offset", "limit_start", "start"); err != nil {
		return a, err
	} else {
		a.Offset = n
	}
	switch strings.ToLower(strings.TrimSpace(get("as_dict"))) {
	case "0", "false":
		a.AsList = true
	}
	return a, nil
}

// kindTimestamp is a standard timestamptz column (creation, modified).
const kindTimestamp kind = 100

// column is a filterable, orderable property of a list's rows.
type column struct {
	name string
	expr string // typed expression (valueExpr)
	text string // as text, for like and search
	kind kind
}

// source is what a list reads: documents of one DocType, or DocTypes.
type source struct {
	table     string
	scope     string
	scopeArgs []any
	doctype   string
	columns   map[string]column
	all       []string // what fields ["*"] selects, in order
	search    []column // title and search fields
	m         *meta
	// masked are the fields the caller's answers mask (Guard.masked): they
	// are compared only in ways that reveal no masked digit (masking.go).
	masked map[string]maskKind
}

// standardColumns are every document's own properties.
func standardColumns() map[string]column {
	return map[string]column{
		"name":        {name: "name", expr: "name", text: "name", kind: kindText},
		"owner":       {name: "owner", expr: "owner", text: "owner", kind: kindText},
		"modified_by": {name: "modified_by", expr: "modified_by", text: "modified_by", kind: kindText},
		"creation":    {name: "creation", expr: "creation", text: "to_char(creation, 'YYYY-MM-DD HH24:MI:SS')", kind: kindTimestamp},
		"modified":    {name: "modified", expr: "modified", text: "to_char(modified, 'YYYY-MM-DD HH24:MI:SS')", kind: kindTimestamp},
		"docstatus":   {name: "docstatus", expr: "docstatus", text: "docstatus::text", kind: kindInt},
	}
}

var standardOrder = []string{"name", "owner", "creation", "modified", "modified_by", "docstatus"}

// documentSource lists m's documents for a: a's organization's masking
// decides which fields the list may compare, and how.
func documentSource(orgID uuid.UUID, m *meta, a Actor) *source {
	s := &source{table: "docframe_documents", scope: "organization_id = ? AND doctype = ?", scopeArgs: []any{orgID, m.Name},
		doctype: m.Name, columns: standardColumns(), all: append([]string{}, standardOrder...), m: m, masked: m.guard.masked(a)}
	for _, f := range m.valueFields() {
		if m.guard.secret(f.Fieldname) {
			// Never answered nor compared: rows say whether it is set.
			s.all = append(s.all, hasFlag(f.Fieldname))
			continue
		}
		s.all = append(s.all, f.Fieldname)
		if f.kind() == kindPassword {
			continue // never compared: its value is sealed
		}
		s.columns[f.Fieldname] = column{name: f.Fieldname, expr: valueExpr(f), text: textExpr(f), kind: f.kind()}
	}
	for _, sf := range append([]string{m.TitleField}, splitList(m.SearchFields)...) {
		if c, ok := s.columns[sf]; ok && sf != "" {
			s.search = append(s.search, c)
		}
	}
	return s
}

// doctypeSource lists DocTypes by their columns.
func doctypeSource(orgID uuid.UUID) *source {
	s := &source{table: "docframe_doctypes", scope: "organization_id = ?", scopeArgs: []any{orgID}, doctype: DocTypeDoctype,
		columns: standardColumns()}
	s.columns["docstatus"] = column{name: "docstatus", expr: "0", text: "'0'", kind: kindInt}
	for _, c := range []string{"module", "autoname", "title_field", "search_fields"} {
		s.columns[c] = column{name: c, expr: c, text: c, kind: kindText}
	}
	for _, c := range []string{"custom", "is_submittable", "istable"} {
		s.columns[c] = column{name: c, expr: "(" + c + "::int)", text: "(" + c + "::int)::text", kind: kindInt}
	}
	s.all = append(append([]string{}, standardOrder...), "module", "custom", "is_submittable", "istable", "autoname", "title_field", "search_fields")
	s.search = []column{s.columns["module"]}
	return s
}

// qualified strips Frappe's table qualification (`tabSales Invoice`.`field`,
// tabX.field) from a field name when it names the source's own DocType.
var qualifiedRE = regexp.MustCompile("^`?tab([^`.]+)`?\\.`?([^`]+)`?$")

func (src *source) plainName(raw string) (string, error) {
	name := strings.TrimSpace(raw)
	if m := qualifiedRE.FindStringSubmatch(name); m != nil {
		if m[1] != src.doctype {
			return "", Validationf("field %s: only fields of %s can be used (child table fields are not supported)", show(raw), src.doctype)
		}
		name = m[2]
	}
	return strings.Trim(name, "`"), nil
}

func (src *source) column(raw string) (column, error) {
	name, err := src.plainName(raw)
	if err != nil {
		return column{}, err
	}
	c, ok := src.columns[name]
	if !ok {
		if src.m != nil {
			if src.m.guard.secret(name) {
				return column{}, Validationf("field %s is a secret: it cannot be used in filters, order_by or fields", name)
			}
			if f, isField := src.m.byName[name]; isField && (f.kind() == kindPassword || f.kind() == kindTable) {
				return column{}, Validationf("field %s (%s) cannot be used in filters or order_by", name, f.Fieldtype)
			}
		}
		return column{}, Validationf("unknown field %s of %s", show(raw), src.doctype)
	}
	return c, nil
}

// query is a list's SQL being built, parameterised only.
type query struct {
	where []string
	args  []any
}

func (q *query) add(cond string, args ...any) {
	q.where = append(q.where, cond)
	q.args = append(q.args, args...)
}

// build turns filters, or_filters and search_term into the WHERE clause.
// Every list and count reads through it (the resource API, frappe.client.*
// and the integration's methods), so the masking rule of masked fields
// (masking.go) holds once for all of them.
func (src *source) build(a ListArgs) (*query, error) {
	q := &query{}
	q.add(src.scope, src.scopeArgs...)
	numbers := 0 // whole numbers compared with masked fields
	and, err := src.parseFilters("filters", a.Filters)
	if err != nil {
		return nil, err
	}
	for _, c := range and {
		q.add(c.sql, c.args...)
		numbers += c.numbers
	}
	or, err := src.parseFilters("or_filters", a.OrFilters)
	if err != nil {
		return nil, err
	}
	if len(or) > 0 {
		var parts []string
		var args []any
		for _, c := range or {
			parts = append(parts, c.sql)
			args = append(args, c.args...)
			numbers += c.numbers
		}
		q.add("("+strings.Join(parts, " OR ")+")", args...)
	}
	if t := strings.TrimSpace(a.SearchTerm); t != "" {
		c := src.searchCondition(t)
		q.add(c.sql, c.args...)
		numbers += c.numbers
	}
	if numbers > MaxMaskedNumbers {
		return nil, Validationf("masked fields (mask_phone_numbers) can be compared with at most %d whole numbers in one request, not %d",
			MaxMaskedNumbers, numbers)
	}
	return q, nil
}

// cond is one filter's SQL; numbers counts the whole numbers it compares
// with masked fields (MaxMaskedNumbers).
type cond struct {
	sql     string
	args    []any
	numbers int
}

// parseFilters reads Frappe's filter forms: a list of [field, op, value]
// (or [doctype, field, op, value], or [field, value] for equality), or an
// object of field: value (equality) or field: [op, value].
func (src *source) parseFilters(param, raw string) ([]cond, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, Validationf("%s must be JSON: a list of [field, operator, value] or an object of field: value", param)
	}
	var out []cond
	switch x := v.(type) {
	case []any:
		for i, item := range x {
			f, ok := item.([]any)
			if !ok {
				return nil, Validationf("%s[%d] must be a list [field, operator, value]", param, i)
			}
			var field, op any
			var value any
			switch len(f) {
			case 2:
				field, op, value = f[0], "=", f[1]
			case 3:
				field, op, value = f[0], f[1], f[2]
			case 4:
				if dt, _ := f[0].(string); dt != src.doctype {
					return nil, Validationf("%s[%d]: only fields of %s can be filtered (child table filters are not supported)", param, i, src.doctype)
				}
				field, op, value = f[1], f[2], f[3]
			default:
				return nil, Validationf("%s[%d] must be [field, operator, value]", param, i)
			}
			fs, ok1 := field.(string)
			ops, ok2 := op.(string)
			if !ok1 || !ok2 {
				return nil, Validationf("%s[%d]: field and operator must be text", param, i)
			}
			c, err := src.condition(fs, ops, value)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	case map[string]any:
		for _, field := range sortedKeys(x) {
			op, value := "=", x[field]
			if pair, ok := value.([]any); ok && len(pair) == 2 {
				if s, ok := pair[0].(string); ok && isOperator(s) {
					op, value = s, pair[1]
				}
			}
			c, err := src.condition(field, op, value)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	default:
		return nil, Validationf("%s must be a list of [field, operator, value] or an object of field: value", param)
	}
	return out, nil
}

var operators = []string{"=", "!=", "<>", ">", ">=", "<", "<=", "like", "not like", "in", "not in", "between", "is", "is not"}

func isOperator(op string) bool {
	return slices.Contains(operators, strings.ToLower(strings.TrimSpace(op)))
}

// condition is one filter's SQL: the column's typed expression against
// values of its type, as parameters. A masked field admits only the
// comparisons maskedFilter allows, with its numbers normalised.
func (src *source) condition(field, op string, value any) (cond, error) {
	c, err := src.column(field)
	if err != nil {
		return cond{}, err
	}
	op = strings.ToLower(strings.TrimSpace(op))
	if !isOperator(op) {
		return cond{}, Validationf("unknown operator %s (one of %s)", show(op), strings.Join(operators, ", "))
	}
	if op == "<>" {
		op = "!="
	}
	if value == nil && (op == "=" || op == "!=") {
		op, value = map[string]string{"=": "is", "!=": "is not"}[op], nil
	}
	numbers := 0
	if kind := src.masked[c.name]; kind != 0 {
		if value, numbers, err = maskedFilter(c, kind, op, value); err != nil {
			return cond{}, err
		}
	}
	out, err := c.compare(op, value)
	out.numbers = numbers
	return out, err
}

// compare is the SQL of c op value, op being one of operators (lower case,
// <> as !=, a null equality as is / is not).
func (c column) compare(op string, value any) (cond, error) {
	switch op {
	case "=", ">", ">=", "<", "<=":
		v, ph, err := c.param(value, false)
		if err != nil {
			return cond{}, err
		}
		return cond{sql: fmt.Sprintf("%s %s %s", c.expr, op, ph), args: []any{v}}, nil
	case "!=":
		v, ph, err := c.param(value, false)
		if err != nil {
			return cond{}, err
		}
		return cond{sql: fmt.Sprintf("(%s IS NULL OR %s <> %s)", c.expr, c.expr, ph), args: []any{v}}, nil
	case "like", "not like":
		s, ok := scalarText(value)
		if !ok {
			return cond{}, Validationf("%s %s needs a text value", c.name, op)
		}
		if trailingEscape(s) {
			return cond{}, Validationf("%s %s: the pattern ends with an escape (\\); escape it as \\\\", c.name, op)
		}
		if !strings.Contains(s, "%") {
			s = "%" + s + "%"
		}
		if op == "like" {
			return cond{sql: c.text + " ILIKE ?", args: []any{s}}, nil
		}
		return cond{sql: fmt.Sprintf("(%s IS NULL OR %s NOT ILIKE ?)", c.text, c.text), args: []any{s}}, nil
	case "in", "not in":
		items, err := listValues(value)
		if err != nil {
			return cond{}, Validationf("%s %s: %s", c.name, op, err.Error())
		}
		if len(items) == 0 {
			return cond{sql: map[string]string{"in": "FALSE", "not in": "TRUE"}[op]}, nil
		}
		var phs []string
		var args []any
		for _, it := range items {
			v, ph, err := c.param(it, false)
			if err != nil {
				return cond{}, err
			}
			phs, args = append(phs, ph), append(args, v)
		}
		list := "(" + strings.Join(phs, ", ") + ")"
		if op == "in" {
			return cond{sql: c.expr + " IN " + list, args: args}, nil
		}
		return cond{sql: fmt.Sprintf("(%s IS NULL OR %s NOT IN %s)", c.expr, c.expr, list), args: args}, nil
	case "between":
		pair, ok := value.([]any)
		if !ok || len(pair) != 2 {
			return cond{}, Validationf("%s between needs two values [from, to]", c.name)
		}
		lo, ph1, err := c.param(pair[0], false)
		if err != nil {
			return cond{}, err
		}
		hi, ph2, err := c.param(pair[1], true)
		if err != nil {
			return cond{}, err
		}
		return cond{sql: fmt.Sprintf("%s BETWEEN %s AND %s", c.expr, ph1, ph2), args: []any{lo, hi}}, nil
	default: // is, is not
		set := false
		switch x := value.(type) {
		case nil:
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "set":
				set = true
			case "not set", "null", "":
			default:
				return cond{}, Validationf("%s %s needs null, \"set\" or \"not set\"", c.name, op)
			}
		default:
			return cond{}, Validationf("%s %s needs null, \"set\" or \"not set\"", c.name, op)
		}
		if op == "is not" {
			set = !set
		}
		isSet := c.expr + " IS NOT NULL"
		if c.kind == kindText || c.kind == kindJSON {
			isSet = fmt.Sprintf("(%s IS NOT NULL AND %s <> '')", c.text, c.text)
		}
		if set {
			return cond{sql: isSet}, nil
		}
		return cond{sql: "NOT " + isSet}, nil
	}
}

// param converts a filter value to the column's type and answers its
// placeholder: numbers are cast to numeric so that the comparison is the
// index's (numeric) expression; end marks the upper bound of a between,
// where a bare date on a date-time means the end of that day.
func (c column) param(v any, end bool) (any, string, error) {
	bad := func(want string) (any, string, error) {
		return nil, "", Validationf("filter on %s: %s is not %s", c.name, show(v), want)
	}
	switch c.kind {
	case kindInt, kindFloat:
		x, ok := toFloat(v)
		if b, isBool := v.(bool); isBool {
			x, ok = map[bool]float64{true: 1, false: 0}[b], true
		}
		if !ok {
			return bad("a number")
		}
		return strconv.FormatFloat(x, 'f', -1, 64), "CAST(? AS numeric)", nil
	case kindDate:
		s, _ := v.(string)
		d, err := normalizeDate(s)
		if err != nil {
			return bad("a date (YYYY-MM-DD)")
		}
		return d, "?", nil
	case kindDatetime, kindTimestamp:
		s, _ := v.(string)
		bare := dateRE.MatchString(strings.TrimSpace(s))
		d, err := normalizeDatetime(s)
		if err != nil {
			return bad("a date and time (YYYY-MM-DD HH:MM:SS)")
		}
		if end && bare {
			d = strings.TrimSuffix(d, "00:00:00") + "23:59:59.999999"
		}
		if c.kind == kindTimestamp {
			t, _ := time.Parse("2006-01-02 15:04:05.999999", d)
			return t, "?", nil
		}
		return d, "?", nil
	}
	s, ok := scalarText(v)
	if !ok {
		return bad("a text value")
	}
	return s, "?", nil
}

func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		if x {
			return "1", true
		}
		return "0", true
	}
	return "", false
}

// listValues reads in's values: a JSON list, or a comma-separated string.
func listValues(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case string:
		var out []any
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("needs a list of values or a comma-separated text")
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// orderBy reads "field [asc|desc], ..." (default: modified desc). Ties are
// broken by name in the direction of the last key, so that pages are
// stable and the default order reads the (modified, name) index.
func (src *source) orderBy(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "modified desc"
	}
	var parts []string
	dir := "DESC"
	hasName := false
	for _, item := range strings.Split(raw, ",") {
		words := strings.Fields(strings.TrimSpace(item))
		if len(words) == 0 || len(words) > 2 {
			return "", Validationf("order_by %s must be \"field [asc|desc]\", comma-separated", show(raw))
		}
		c, err := src.column(words[0])
		if err != nil {
			return "", err
		}
		if src.masked[c.name] != 0 {
			// The order of masked values would tell them apart from known
			// ones digit by digit: refused, not ignored, so that a client
			// is never handed pages in an order it did not get.
			return "", maskedf(c.name, "lists cannot be ordered by it")
		}
		dir = "ASC"
		if len(words) == 2 {
			switch strings.ToLower(words[1]) {
			case "asc":
			case "desc":
				dir = "DESC"
			default:
				return "", Validationf("order_by: direction %s must be asc or desc", show(words[1]))
			}
		}
		hasName = hasName || c.name == "name"
		parts = append(parts, c.expr+" "+dir)
	}
	if !hasName {
		parts = append(parts, "name "+dir)
	}
	return strings.Join(parts, ", "), nil
}

// selection reads fields: a JSON list or a comma list of plain field
// names; "*" is every field (tables excepted). None: name only.
func (src *source) selection(raw string) ([]string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return []string{"name"}, nil
	}
	var names []string
	if strings.HasPrefix(raw, "[") {
		if err := json.Unmarshal([]byte(raw), &names); err != nil {
			return nil, Validationf("fields must be a JSON list of field names or a comma-separated list")
		}
	} else {
		names = strings.Split(raw, ",")
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "*" || strings.HasSuffix(n, ".*") {
			for _, a := range src.all {
				if !seen[a] {
					seen[a] = true
					out = append(out, a)
				}
			}
			continue
		}
		name, err := src.plainName(n)
		if err != nil {
			return nil, err
		}
		known := name == "id" || name == "doctype" || name == "idx" || slices.Contains(src.all, name)
		if !known {
			if src.m != nil {
				if src.m.guard.secret(name) {
					return nil, Validationf("field %s is a secret: it is never answered (select %s to know whether it is set)", name, hasFlag(name))
				}
				if f, ok := src.m.byName[name]; ok && f.kind() == kindTable {
					return nil, Validationf("field %s is a table: list rows do not carry child tables (get the document)", name)
				}
			}
			return nil, Validationf("unknown field %s of %s", show(n), src.doctype)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return []string{"name"}, nil
	}
	return out, nil
}

func limitOf(a ListArgs) (int, error) {
	switch {
	case a.Limit < 0:
		return DefaultLimit, nil
	case a.Limit == 0:
		return MaxLimit, nil
	case a.Limit > MaxLimit:
		return 0, Validationf("limit must be at most %d", MaxLimit)
	}
	return a.Limit, nil
}

// List answers documents of a DocType (or DocTypes, for "DocType"): rows of
// the selected fields (name only by default), filtered, searched, ordered
// and paged; Password fields read as Mask.
func (s *Service) List(ctx context.Context, a Actor, orgID uuid.UUID, doctype string, args ListArgs) ([]any, error) {
	src, err := s.source(ctx, a, orgID, doctype)
	if err != nil {
		return nil, err
	}
	fields, err := src.selection(args.Fields)
	if err != nil {
		return nil, err
	}
	q, err := src.build(args)
	if err != nil {
		return nil, err
	}
	order, err := src.orderBy(args.OrderBy)
	if err != nil {
		return nil, err
	}
	limit, err := limitOf(args)
	if err != nil {
		return nil, err
	}
	if src.m == nil {
		return s.listDocTypes(ctx, src, q, order, limit, args, fields)
	}
	cols := "organization_id, doctype, name, docstatus, owner, modified_by, creation, modified"
	needData, needSecrets := false, false
	for _, f := range fields {
		fd, ok := src.m.byName[f]
		if secret, isFlag := strings.CutPrefix(f, "has_"); !ok && isFlag && src.m.guard.secret(secret) {
			fd, ok = src.m.byName[secret] // a secret's has_ flag reads the secret's own column
		}
		if ok {
			needData = needData || fd.kind() != kindPassword
			needSecrets = needSecrets || fd.kind() == kindPassword
		}
	}
	if needData {
		cols += ", data"
	}
	if needSecrets {
		cols += ", secrets"
	}
	sql := fmt.Sprintf("SELECT %s FROM docframe_documents WHERE %s ORDER BY %s LIMIT ? OFFSET ?", cols, strings.Join(q.where, " AND "), order)
	return cappedRows(ctx, s, sql, append(q.args, limit, args.Offset), func(r *docRow) (any, error) {
		return pick(s.view(a, src.m, r.toDoc(src.m)), fields, args.AsList), nil
	})
}

// MaxListBytes bounds one list's rows as JSON. A list past it is refused
// (417, asking for fewer fields or rows), not cut short: a Frappe client
// paging with limit_start takes a short page for the end of the list, so a
// truncated answer would lose rows silently.
const MaxListBytes = 4 << 20

// cappedRows reads a list's rows one at a time (one stored row in memory,
// not the page's) and answers them as row makes them, refusing the list
// once the rows' JSON passes MaxListBytes.
func cappedRows[R any](ctx context.Context, s *Service, sql string, args []any, row func(*R) (any, error)) ([]any, error) {
	rows, err := s.db.WithContext(ctx).Raw(sql, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []any{}
	size := 0
	for rows.Next() {
		var r R
		if err := s.db.ScanRows(rows, &r); err != nil {
			return nil, err
		}
		v, err := row(&r)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if size += len(b) + 1; size > MaxListBytes {
			return nil, Validationf("the answer would be larger than %d MiB (at row %d): ask for fewer fields or a smaller limit",
				MaxListBytes>>20, len(out)+1)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func pick(full map[string]any, fields []string, asList bool) any {
	if asList {
		row := make([]any, len(fields))
		for i, f := range fields {
			row[i] = full[f]
		}
		return row
	}
	row := make(map[string]any, len(fields))
	for _, f := range fields {
		row[f] = full[f]
	}
	return row
}

func (s *Service) listDocTypes(ctx context.Context, src *source, q *query, order string, limit int, args ListArgs, fields []string) ([]any, error) {
	sql := fmt.Sprintf("SELECT * FROM docframe_doctypes WHERE %s ORDER BY %s LIMIT ? OFFSET ?", strings.Join(q.where, " AND "), order)
	return cappedRows(ctx, s, sql, append(q.args, limit, args.Offset), func(r *doctypeRow) (any, error) {
		m, err := r.meta()
		if err != nil {
			return nil, err
		}
		return pick(renderDocType(m), fields, args.AsList), nil
	})
}

// Count answers how many documents match filters (Frappe's get_count).
func (s *Service) Count(ctx context.Context, a Actor, orgID uuid.UUID, doctype string, args ListArgs) (int64, error) {
	src, err := s.source(ctx, a, orgID, doctype)
	if err != nil {
		return 0, err
	}
	q, err := src.build(args)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.db.WithContext(ctx).Raw(fmt.Sprintf("SELECT count(*) FROM %s WHERE %s", src.table, strings.Join(q.where, " AND ")), q.args...).Scan(&n).Error
	return n, err
}

// source resolves what a list of doctype reads, checking read permission.
// Every member may list DocTypes (clients read definitions to build forms).
func (s *Service) source(ctx context.Context, a Actor, orgID uuid.UUID, doctype string) (*source, error) {
	if doctype == DocTypeDoctype {
		return doctypeSource(orgID), nil
	}
	m, err := s.docMeta(ctx, orgID, doctype)
	if err != nil {
		return nil, err
	}
	if err := m.require(a, PermRead); err != nil {
		return nil, err
	}
	return documentSource(orgID, m, a), nil
}

// trailingEscape reports whether a LIKE pattern ends with an unpaired
// backslash, which PostgreSQL refuses (an error, not a match) when it runs.
func trailingEscape(pattern string) bool {
	n := len(pattern) - len(strings.TrimRight(pattern, `\`))
	return n%2 == 1
}
