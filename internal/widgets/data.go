package widgets

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/models"
)

// Limits on a widget's shapes: a pie of 50 slices or a chart of 20 lines
// is already unreadable.
const (
	maxDataPoints = 50
	maxDatasets   = 20
	tableRows     = 10
)

// Point is one labelled figure: a day of a chart, a group of a bar, pie or
// table.
type Point struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// Dataset is one line of a grouped line chart: a group's daily figures.
type Dataset struct {
	Label string    `json:"label"`
	Data  []float64 `json:"data"`
}

// Series is a grouped line chart, Chart.js style: Labels are the days.
type Series struct {
	Labels   []string  `json:"labels"`
	Datasets []Dataset `json:"datasets"`
}

// Data is what a widget shows over a period. The slices are empty (and
// GroupedSeries nil) when the widget's shape does not use them.
type Data struct {
	WidgetID      uuid.UUID
	Value         float64
	PrevValue     float64
	Change        float64
	ChartData     []Point
	DataPoints    []Point
	GroupedSeries *Series
	TableRows     []map[string]any
}

// WidgetData answers the data of one widget the caller sees.
func (s *Service) WidgetData(ctx context.Context, c Caller, id uuid.UUID, p Period) (*Data, error) {
	w, err := s.Get(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return s.data(ctx, w, p)
}

// AllData answers the data of every widget on the caller's dashboard, by
// widget id.
func (s *Service) AllData(ctx context.Context, c Caller, p Period) (map[uuid.UUID]*Data, error) {
	ws, err := s.List(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]*Data, len(ws))
	for i := range ws {
		d, err := s.data(ctx, &ws[i], p)
		if err != nil {
			return nil, err
		}
		out[ws[i].ID] = d
	}
	return out, nil
}

// data computes a widget's figures: the value and the previous period's in
// one statement, then at most one more for its shape.
func (s *Service) data(ctx context.Context, w *models.DashboardWidget, p Period) (*Data, error) {
	d := &Data{WidgetID: w.ID, ChartData: []Point{}, DataPoints: []Point{}, TableRows: []map[string]any{}}
	if w.DataSource == "" || sourceNamed(w.DataSource) == nil {
		return d, nil // shortcuts: nothing to count
	}
	if err := s.values(ctx, w, p, d); err != nil {
		return nil, err
	}
	var err error
	switch {
	case w.DisplayType == "chart" && w.GroupByField == "":
		d.ChartData, err = s.daily(ctx, w, p)
	case w.DisplayType == "chart" && w.ChartType == "line":
		d.GroupedSeries, err = s.series(ctx, w, p)
	case w.DisplayType == "chart" || (w.DisplayType == "table" && w.GroupByField != ""):
		d.DataPoints, err = s.grouped(ctx, w, p)
	case w.DisplayType == "table":
		d.TableRows, err = s.latest(ctx, w, p)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// values fills Value, PrevValue and Change. A percentage widget shows its
// filtered figure as a share of the same metric over all the source's
// rows of the period (the filters select the part, the period the whole).
func (s *Service) values(ctx context.Context, w *models.DashboardWidget, p Period, d *Data) error {
	q := newQuery(w, w.OrganizationID, p, p.Previous())
	agg, t, f := q.agg(), q.t(), q.filters()
	var sql string
	if w.DisplayType == "percentage" {
		sql = fmt.Sprintf(`SELECT COALESCE(%[1]s FILTER (WHERE %[2]s >= @from AND %[3]s), 0)::float8 AS cur,
			COALESCE(%[1]s FILTER (WHERE %[2]s < @from AND %[3]s), 0)::float8 AS prev,
			COALESCE(%[1]s FILTER (WHERE %[2]s >= @from), 0)::float8 AS cur_all,
			COALESCE(%[1]s FILTER (WHERE %[2]s < @from), 0)::float8 AS prev_all
			FROM %[4]s WHERE %[5]s`, agg, t, f, q.from(), q.scope("prev_from"))
	} else {
		sql = fmt.Sprintf(`SELECT COALESCE(%[1]s FILTER (WHERE %[2]s >= @from), 0)::float8 AS cur,
			COALESCE(%[1]s FILTER (WHERE %[2]s < @from), 0)::float8 AS prev, 0::float8 AS cur_all, 0::float8 AS prev_all
			FROM %[4]s WHERE %[5]s AND %[3]s`, agg, t, f, q.from(), q.scope("prev_from"))
	}
	var r struct{ Cur, Prev, CurAll, PrevAll float64 }
	if err := s.db.WithContext(ctx).Raw(sql, q.args).Scan(&r).Error; err != nil {
		return fmt.Errorf("widget %s value: %w", w.ID, err)
	}
	if w.DisplayType == "percentage" {
		r.Cur, r.Prev = share(r.Cur, r.CurAll), share(r.Prev, r.PrevAll)
	}
	d.Value, d.PrevValue, d.Change = round2(r.Cur), round2(r.Prev), Change(r.Cur, r.Prev)
	return nil
}

// Change is the percent change from prev to cur, always a number: 0 when
// both are 0, 100 when only the previous figure is 0 (something from
// nothing counts as doubling, not as infinity).
func Change(cur, prev float64) float64 {
	switch {
	case prev == 0 && cur == 0:
		return 0
	case prev == 0:
		return 100
	}
	return round2((cur - prev) / math.Abs(prev) * 100)
}

func share(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return part / whole * 100
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// daily is one point per day of the period, days without rows included.
func (s *Service) daily(ctx context.Context, w *models.DashboardWidget, p Period) ([]Point, error) {
	q := newQuery(w, w.OrganizationID, p, p)
	f := q.filters()
	sql := fmt.Sprintf(`SELECT to_char(g.day, 'YYYY-MM-DD') AS label, COALESCE(v.val, 0)::float8 AS value
		FROM (SELECT CAST(@from_date AS date) + i AS day FROM generate_series(0, CAST(@days AS int) - 1) i) g
		LEFT JOIN (SELECT (%[1]s AT TIME ZONE 'UTC')::date AS day, %[2]s AS val FROM %[3]s WHERE %[4]s AND %[5]s GROUP BY 1) v
		ON v.day = g.day ORDER BY g.day`, q.t(), q.agg(), q.from(), q.scope("from"), f)
	var out []Point
	if err := s.db.WithContext(ctx).Raw(sql, q.args).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("widget %s chart: %w", w.ID, err)
	}
	for i := range out {
		out[i].Value = round2(out[i].Value)
	}
	return out, nil
}

// grouped is the figure per value of the grouped field, largest first.
func (s *Service) grouped(ctx context.Context, w *models.DashboardWidget, p Period) ([]Point, error) {
	q := newQuery(w, w.OrganizationID, p, p)
	f, g := q.filters(), q.group()
	sql := fmt.Sprintf(`SELECT %[1]s AS label, COALESCE(%[2]s, 0)::float8 AS value FROM %[3]s WHERE %[4]s AND %[5]s
		GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT %[6]d`, g, q.agg(), q.from(), q.scope("from"), f, maxDataPoints)
	out := []Point{}
	if err := s.db.WithContext(ctx).Raw(sql, q.args).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("widget %s groups: %w", w.ID, err)
	}
	for i := range out {
		out[i].Value = round2(out[i].Value)
	}
	return out, nil
}

// series is a line per value of the grouped field (the largest
// maxDatasets), a figure per day, days without rows at 0.
func (s *Service) series(ctx context.Context, w *models.DashboardWidget, p Period) (*Series, error) {
	q := newQuery(w, w.OrganizationID, p, p)
	f, g := q.filters(), q.group()
	sql := fmt.Sprintf(`SELECT (%[1]s AT TIME ZONE 'UTC')::date - CAST(@from_date AS date) AS day, %[2]s AS label,
		COALESCE(%[3]s, 0)::float8 AS value FROM %[4]s WHERE %[5]s AND %[6]s GROUP BY 1, 2`,
		q.t(), g, q.agg(), q.from(), q.scope("from"), f)
	var rows []struct {
		Day   int
		Label string
		Value float64
	}
	if err := s.db.WithContext(ctx).Raw(sql, q.args).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("widget %s series: %w", w.ID, err)
	}
	n := p.Days()
	out := &Series{Labels: make([]string, n), Datasets: []Dataset{}}
	for i := range n {
		out.Labels[i] = p.From.AddDate(0, 0, i).Format(dateLayout)
	}
	byLabel := map[string][]float64{}
	totals := map[string]float64{}
	for _, r := range rows {
		if r.Day < 0 || r.Day >= n {
			continue
		}
		if byLabel[r.Label] == nil {
			byLabel[r.Label] = make([]float64, n)
		}
		byLabel[r.Label][r.Day] = round2(r.Value)
		totals[r.Label] += r.Value
	}
	for label, data := range byLabel {
		out.Datasets = append(out.Datasets, Dataset{Label: label, Data: data})
	}
	slices.SortFunc(out.Datasets, func(a, b Dataset) int {
		return cmp.Or(cmp.Compare(totals[b.Label], totals[a.Label]), cmp.Compare(a.Label, b.Label))
	})
	if len(out.Datasets) > maxDatasets {
		out.Datasets = out.Datasets[:maxDatasets]
	}
	return out, nil
}

// latest is the period's latest records: id, time and the source's
// fields.
func (s *Service) latest(ctx context.Context, w *models.DashboardWidget, p Period) ([]map[string]any, error) {
	q := newQuery(w, w.OrganizationID, p, p)
	f := q.filters()
	timeName := q.t()[len(q.src.alias)+1:]
	cols := []string{q.src.alias + ".id::text AS id", q.t() + " AS " + timeName}
	for _, name := range q.src.rowFields {
		fd := q.src.fields[name]
		q.join(fd.join)
		expr := fd.expr
		if fd.numeric {
			expr = "(" + expr + ")::float8"
		}
		cols = append(cols, expr+" AS "+name)
	}
	sql := fmt.Sprintf(`SELECT %s FROM %s WHERE %s AND %s ORDER BY %s DESC, %s.id DESC LIMIT %d`,
		strings.Join(cols, ", "), q.from(), q.scope("from"), f, q.t(), q.src.alias, tableRows)
	rows, err := s.db.WithContext(ctx).Raw(sql, q.args).Rows()
	if err != nil {
		return nil, fmt.Errorf("widget %s rows: %w", w.ID, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for rows.Next() {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make(map[string]any, len(names))
		for i, name := range names {
			row[name] = cell(vals[i])
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// cell renders a scanned value for JSON: times in UTC, numbers as numbers.
func cell(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC()
	case []byte:
		return string(x)
	}
	return v
}
