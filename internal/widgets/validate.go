package widgets

import (
	"slices"
	"strconv"
	"strings"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// Limits on a widget's fields.
const (
	maxName        = 100
	maxDescription = 500
	maxColor       = 32
	maxFilters     = 10
	maxFilterValue = 200
	maxGrid        = 1000
)

// Input is a create or an update: nil fields are left as they are (on
// create: defaults), except GroupByField, which an update always applies
// (nil or empty clears it), as the spec says.
type Input struct {
	Name, Description, DataSource, Metric, Field *string
	Filters                                      *[]FilterInput
	DisplayType, ChartType, GroupByField         *string
	ShowChange                                   *bool
	Color, Size                                  *string
	Config                                       *map[string]any
	IsShared                                     *bool
	GridX, GridY, GridW, GridH                   *int
}

// FilterInput is a filter as sent: its value may be a JSON string, number
// or boolean, stored as text.
type FilterInput struct {
	Field, Operator string
	Value           any
}

// gridDefaults are the width and height of a new widget by display type:
// a figure is a small tile, charts and tables need room.
var gridDefaults = map[string][2]int{"number": {3, 2}, "percentage": {3, 2}, "chart": {6, 4}, "table": {6, 4}, "shortcuts": {3, 2}}

// apply copies the given fields onto w and checks the result as a whole
// (a changed data source must still have the fields its filters and
// grouping name).
func apply(w *models.DashboardWidget, in Input, create bool) error {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&w.Name, in.Name)
	set(&w.Description, in.Description)
	set(&w.DataSource, in.DataSource)
	set(&w.Metric, in.Metric)
	set(&w.Field, in.Field)
	set(&w.DisplayType, in.DisplayType)
	set(&w.ChartType, in.ChartType)
	set(&w.Color, in.Color)
	set(&w.Size, in.Size)
	if !create || in.GroupByField != nil {
		w.GroupByField = ""
		set(&w.GroupByField, in.GroupByField)
	}
	if in.ShowChange != nil {
		w.ShowChange = *in.ShowChange
	}
	if in.Config != nil {
		w.Config.V = *in.Config
	}
	if w.Config.V == nil {
		w.Config.V = map[string]any{}
	}
	if in.Filters != nil {
		fs, err := filterValues(*in.Filters)
		if err != nil {
			return err
		}
		w.Filters.V = fs
	}
	if w.Filters.V == nil {
		w.Filters.V = []models.WidgetFilter{}
	}
	if w.DisplayType == "" {
		w.DisplayType = "number"
	}
	if w.Size == "" {
		w.Size = "small"
	}
	if !slices.Contains(DisplayTypes, w.DisplayType) {
		return oneOf("display_type", DisplayTypes)
	}
	if create {
		def := gridDefaults[w.DisplayType]
		w.GridW, w.GridH = def[0], def[1]
	}
	for _, g := range []struct {
		name     string
		dst, v   *int
		min, max int
	}{{"grid_x", &w.GridX, in.GridX, 0, maxGrid}, {"grid_y", &w.GridY, in.GridY, 0, maxGrid},
		{"grid_w", &w.GridW, in.GridW, 1, maxGrid}, {"grid_h", &w.GridH, in.GridH, 1, maxGrid}} {
		if g.v != nil {
			if *g.v < g.min || *g.v > g.max {
				return apperr.Invalidf("%s must be between %d and %d", g.name, g.min, g.max)
			}
			*g.dst = *g.v
		}
	}
	if w.DisplayType == "chart" && w.ChartType == "" {
		w.ChartType = "line"
	}
	return validate(w)
}

// validate checks a widget as it would be stored.
func validate(w *models.DashboardWidget) error {
	switch {
	case w.Name == "":
		return apperr.Invalidf("name is required")
	case len([]rune(w.Name)) > maxName:
		return apperr.Invalidf("name is longer than %d characters", maxName)
	case len([]rune(w.Description)) > maxDescription:
		return apperr.Invalidf("description is longer than %d characters", maxDescription)
	case len([]rune(w.Color)) > maxColor:
		return apperr.Invalidf("color is longer than %d characters", maxColor)
	case !slices.Contains(Sizes, w.Size):
		return oneOf("size", Sizes)
	case w.ChartType != "" && !slices.Contains(ChartTypes, w.ChartType):
		return oneOf("chart_type", ChartTypes)
	}
	if w.DataSource == "" {
		if w.DisplayType != "shortcuts" {
			return apperr.Invalidf("data_source is required (one of %s)", strings.Join(sourceNames(), ", "))
		}
		// Shortcuts show no figure: nothing may refer to a source.
		if w.Metric != "" || w.Field != "" || w.GroupByField != "" || len(w.Filters.V) > 0 {
			return apperr.Invalidf("metric, field, filters and group_by_field need a data_source")
		}
		return nil
	}
	src := sourceNamed(w.DataSource)
	if src == nil {
		return oneOf("data_source", sourceNames())
	}
	if w.Metric == "" && w.DisplayType == "shortcuts" {
		w.Metric = "count"
	}
	if !slices.Contains(Metrics, w.Metric) {
		return oneOf("metric", Metrics)
	}
	if w.Field != "" && !slices.Contains(src.NumericFields, w.Field) {
		return apperr.Invalidf("field %q is not a numeric field of %s%s", w.Field, src.Name, numericList(src))
	}
	if w.Metric != "count" && w.Field == "" {
		return apperr.Invalidf("metric %s needs a field: a numeric field of %s%s", w.Metric, src.Name, numericList(src))
	}
	if w.GroupByField != "" && !slices.Contains(src.Fields, w.GroupByField) {
		return apperr.Invalidf("group_by_field %q is not a field of %s (one of %s)", w.GroupByField, src.Name, strings.Join(src.Fields, ", "))
	}
	for _, f := range w.Filters.V {
		if err := checkFilter(src, f); err != nil {
			return err
		}
	}
	return nil
}

func numericList(src *source) string {
	if len(src.NumericFields) == 0 {
		return ", which has none"
	}
	return " (one of " + strings.Join(src.NumericFields, ", ") + ")"
}

// checkFilter refuses a filter the source cannot apply: the field must be
// the source's, text fields take equals, not_equals and contains, numeric
// ones every operator but contains, with a number.
func checkFilter(src *source, f models.WidgetFilter) error {
	fd, ok := src.fields[f.Field]
	if !ok {
		return apperr.Invalidf("filter field %q is not a field of %s (one of %s)", f.Field, src.Name,
			strings.Join(slices.Concat(src.Fields, src.NumericFields), ", "))
	}
	if !slices.ContainsFunc(Operators, func(o Operator) bool { return o.Value == f.Operator }) {
		vals := make([]string, len(Operators))
		for i, o := range Operators {
			vals[i] = o.Value
		}
		return apperr.Invalidf("filter operator %q is not one of %s", f.Operator, strings.Join(vals, ", "))
	}
	if fd.numeric {
		if f.Operator == "contains" {
			return apperr.Invalidf("filter on %s: contains applies to text fields only", f.Field)
		}
		if _, err := strconv.ParseFloat(f.Value, 64); err != nil {
			return apperr.Invalidf("filter on %s needs a numeric value, not %q", f.Field, f.Value)
		}
		return nil
	}
	switch f.Operator {
	case "gt", "lt", "gte", "lte":
		return apperr.Invalidf("filter on %s: %s applies to numeric fields only", f.Field, f.Operator)
	}
	return nil
}

// filterValues turns the filters as sent into stored ones, their values as
// text.
func filterValues(in []FilterInput) ([]models.WidgetFilter, error) {
	if len(in) > maxFilters {
		return nil, apperr.Invalidf("at most %d filters", maxFilters)
	}
	out := make([]models.WidgetFilter, len(in))
	for i, f := range in {
		var v string
		switch x := f.Value.(type) {
		case nil:
		case string:
			v = x
		case float64:
			v = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			v = strconv.FormatBool(x)
		case int:
			v = strconv.Itoa(x)
		default:
			return nil, apperr.Invalidf("filter value must be a string, a number or a boolean")
		}
		if len([]rune(v)) > maxFilterValue {
			return nil, apperr.Invalidf("filter value is longer than %d characters", maxFilterValue)
		}
		out[i] = models.WidgetFilter{Field: strings.TrimSpace(f.Field), Operator: strings.TrimSpace(f.Operator), Value: v}
	}
	return out, nil
}

func oneOf(name string, vals []string) error {
	return apperr.Invalidf("%s must be one of %s", name, strings.Join(vals, ", "))
}
