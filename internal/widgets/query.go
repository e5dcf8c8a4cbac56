package widgets

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/paging"
	"wharf/models"
)

// query builds one statement over a widget's data source: the FROM clause
// with the joins its fields need, the organization and period, and the
// filters as conditions whose values are named parameters. Only the
// source's fixed SQL fragments are ever written into the text.
type query struct {
	src   *source
	w     *models.DashboardWidget
	args  map[string]any
	joins []string
}

func newQuery(w *models.DashboardWidget, orgID uuid.UUID, cur, prev Period) *query {
	q := &query{src: sourceNamed(w.DataSource), w: w, args: map[string]any{
		"org": orgID, "from": cur.From, "end": cur.end(), "prev_from": prev.From,
		"from_date": cur.From.Format(dateLayout), "days": cur.Days(),
	}}
	return q
}

func (q *query) param(v any) string {
	name := "p" + strconv.Itoa(len(q.args))
	q.args[name] = v
	return "@" + name
}

func (q *query) join(j string) {
	if j != "" && !slices.Contains(q.joins, j) {
		q.joins = append(q.joins, j)
	}
}

// t is the source's time column.
func (q *query) t() string { return q.src.timeCol }

// from is the FROM clause; call it after everything that adds joins.
func (q *query) from() string {
	return q.src.table + " " + q.src.alias + " " + strings.Join(q.joins, " ")
}

// scope is the organization and the rows from since (a parameter name) to
// the end of the current period.
func (q *query) scope(since string) string {
	return fmt.Sprintf("%s.organization_id = @org AND %s >= @%s AND %s < @end", q.src.alias, q.t(), since, q.t())
}

// agg is the metric over the rows.
func (q *query) agg() string {
	if q.w.Metric == "count" {
		return "count(*)"
	}
	return q.w.Metric + "(" + q.src.fields[q.w.Field].expr + ")"
}

// group is the grouped field's value as a label (empty for none), joining
// what it needs.
func (q *query) group() string {
	f := q.src.fields[q.w.GroupByField]
	q.join(f.join)
	return "COALESCE(" + f.expr + ", '')"
}

// filters is the widget's filters as one condition ("true" for none).
func (q *query) filters() string {
	conds := []string{"true"}
	for _, f := range q.w.Filters.V {
		fd := q.src.fields[f.Field]
		expr := fd.expr
		if fd.exists != "" {
			expr = fd.inner
		} else {
			q.join(fd.join)
		}
		c := q.condition(expr, fd.numeric, f)
		if fd.exists != "" {
			c = fmt.Sprintf(fd.exists, c)
		}
		conds = append(conds, "("+c+")")
	}
	return strings.Join(conds, " AND ")
}

// condition compares expr with the filter's value (checked by validate:
// numeric operators have numeric values).
func (q *query) condition(expr string, numeric bool, f models.WidgetFilter) string {
	var v any = f.Value
	param := func() string { return q.param(v) }
	if numeric {
		// Integer columns compare with a fractional value too.
		n, _ := strconv.ParseFloat(f.Value, 64)
		v = n
		param = func() string { return "CAST(" + q.param(v) + " AS float8)" }
	}
	switch f.Operator {
	case "not_equals":
		// Rows without a value (no account, not yet assigned) are not
		// equal to anything.
		return expr + " IS DISTINCT FROM " + param()
	case "contains":
		return expr + " ILIKE " + q.param(paging.Contains(f.Value))
	case "gt":
		return expr + " > " + param()
	case "lt":
		return expr + " < " + param()
	case "gte":
		return expr + " >= " + param()
	case "lte":
		return expr + " <= " + param()
	}
	return expr + " = " + param()
}
