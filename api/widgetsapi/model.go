package widgetsapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/widgets"
	"wharf/models"
)

type filterJSON struct {
	Field    string `json:"field"`
	Operator string `json:"operator"`
	Value    any    `json:"value" description:"A string, number or boolean; stored and answered as a string."`
}

// widgetRequest is a create or an update: absent (null) fields are left as
// they are (defaults on create), except group_by_field on update, which is
// always applied (absent or empty clears it).
type widgetRequest struct {
	Name         *string         `json:"name"`
	Description  *string         `json:"description"`
	DataSource   *string         `json:"data_source"`
	Metric       *string         `json:"metric" description:"count, sum or avg; sum and avg need field."`
	Field        *string         `json:"field" description:"A numeric field of the data source (GET /api/widgets/data-sources)."`
	Filters      *[]filterJSON   `json:"filters"`
	DisplayType  *string         `json:"display_type" description:"number (default), percentage, chart, table or shortcuts."`
	ChartType    *string         `json:"chart_type" description:"line (default for charts), bar or pie."`
	GroupByField *string         `json:"group_by_field"`
	ShowChange   *bool           `json:"show_change"`
	Color        *string         `json:"color"`
	Size         *string         `json:"size" description:"small (default), medium or large."`
	Config       *map[string]any `json:"config"`
	IsShared     *bool           `json:"is_shared" description:"true needs analytics:share."`
	GridX        *int            `json:"grid_x"`
	GridY        *int            `json:"grid_y"`
	GridW        *int            `json:"grid_w"`
	GridH        *int            `json:"grid_h"`
}

func (r widgetRequest) input() widgets.Input {
	in := widgets.Input{Name: r.Name, Description: r.Description, DataSource: r.DataSource, Metric: r.Metric, Field: r.Field,
		DisplayType: r.DisplayType, ChartType: r.ChartType, GroupByField: r.GroupByField, ShowChange: r.ShowChange, Color: r.Color,
		Size: r.Size, Config: r.Config, IsShared: r.IsShared, GridX: r.GridX, GridY: r.GridY, GridW: r.GridW, GridH: r.GridH}
	if r.Filters != nil {
		fs := make([]widgets.FilterInput, len(*r.Filters))
		for i, f := range *r.Filters {
			fs[i] = widgets.FilterInput{Field: f.Field, Operator: f.Operator, Value: f.Value}
		}
		in.Filters = &fs
	}
	return in
}

type filterResp struct {
	Field    string `json:"field"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
}

type widgetResp struct {
	ID           uuid.UUID      `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	DataSource   string         `json:"data_source"`
	Metric       string         `json:"metric"`
	Field        string         `json:"field"`
	Filters      []filterResp   `json:"filters"`
	DisplayType  string         `json:"display_type"`
	ChartType    string         `json:"chart_type"`
	GroupByField string         `json:"group_by_field"`
	ShowChange   bool           `json:"show_change"`
	Color        string         `json:"color"`
	Size         string         `json:"size"`
	DisplayOrder int            `json:"display_order"`
	GridX        int            `json:"grid_x"`
	GridY        int            `json:"grid_y"`
	GridW        int            `json:"grid_w"`
	GridH        int            `json:"grid_h"`
	Config       map[string]any `json:"config"`
	IsShared     bool           `json:"is_shared"`
	IsDefault    bool           `json:"is_default"`
	IsOwner      bool           `json:"is_owner"`
	CreatedBy    uuid.UUID      `json:"created_by"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

func toWidgetResp(w models.DashboardWidget, userID uuid.UUID) widgetResp {
	fs := make([]filterResp, len(w.Filters.V))
	for i, f := range w.Filters.V {
		fs[i] = filterResp(f)
	}
	cfg := w.Config.V
	if cfg == nil {
		cfg = map[string]any{}
	}
	return widgetResp{ID: w.ID, Name: w.Name, Description: w.Description, DataSource: w.DataSource, Metric: w.Metric, Field: w.Field,
		Filters: fs, DisplayType: w.DisplayType, ChartType: w.ChartType, GroupByField: w.GroupByField, ShowChange: w.ShowChange,
		Color: w.Color, Size: w.Size, DisplayOrder: w.DisplayOrder, GridX: w.GridX, GridY: w.GridY, GridW: w.GridW, GridH: w.GridH,
		Config: cfg, IsShared: w.IsShared, IsDefault: w.IsDefault, IsOwner: w.CreatedBy == userID, CreatedBy: w.CreatedBy,
		CreatedAt: web.UTC(w.CreatedAt), UpdatedAt: web.UTC(w.UpdatedAt)}
}

type listResp struct {
	Widgets []widgetResp `json:"widgets"`
}

type placementJSON struct {
	ID    string `json:"id"`
	GridX int    `json:"grid_x"`
	GridY int    `json:"grid_y"`
	GridW int    `json:"grid_w"`
	GridH int    `json:"grid_h"`
}

type layoutRequest struct {
	Layout []placementJSON `json:"layout" description:"Every widget named must be the caller's own; one refused id changes nothing."`
}

type periodQuery struct {
	From string `query:"from" description:"First day, YYYY-MM-DD (UTC); default the 1st of to's month."`
	To   string `query:"to" description:"Last day, YYYY-MM-DD (UTC), included; default today. At most 366 days."`
}

type sourceResp struct {
	Name          string   `json:"name"`
	Label         string   `json:"label"`
	Fields        []string `json:"fields"`
	NumericFields []string `json:"numeric_fields" description:"The fields sum and avg accept (filters compare them as numbers)."`
}

type operatorResp struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

type dataSourcesResp struct {
	DataSources  []sourceResp   `json:"data_sources"`
	Metrics      []string       `json:"metrics"`
	DisplayTypes []string       `json:"display_types"`
	ChartTypes   []string       `json:"chart_types"`
	Sizes        []string       `json:"sizes"`
	Operators    []operatorResp `json:"operators"`
}

type dataResp struct {
	WidgetID      uuid.UUID        `json:"widget_id"`
	Value         float64          `json:"value"`
	PrevValue     float64          `json:"prev_value" description:"The same figure over as many days, ending the day before from."`
	Change        float64          `json:"change" description:"Percent change from prev_value: 0 when both are 0, 100 when only prev_value is."`
	From          string           `json:"from"`
	To            string           `json:"to"`
	ChartData     []widgets.Point  `json:"chart_data" description:"One point per day (charts without group_by_field), else empty."`
	DataPoints    []widgets.Point  `json:"data_points" description:"One point per value of group_by_field (grouped bar, pie and table), else empty."`
	GroupedSeries *widgets.Series  `json:"grouped_series" description:"Grouped line charts: labels are the days, one dataset per value; else null."`
	TableRows     []map[string]any `json:"table_rows" description:"The period's latest 10 records (tables without group_by_field), else empty."`
}

func toDataResp(d *widgets.Data, p widgets.Period) dataResp {
	return dataResp{WidgetID: d.WidgetID, Value: d.Value, PrevValue: d.PrevValue, Change: d.Change,
		From: p.From.Format(time.DateOnly), To: p.To.Format(time.DateOnly),
		ChartData: d.ChartData, DataPoints: d.DataPoints, GroupedSeries: d.GroupedSeries, TableRows: d.TableRows}
}

type allDataResp struct {
	Data map[string]dataResp `json:"data"`
}

type overviewResp struct {
	Timezone            string    `json:"timezone" description:"The organization's timezone: today and the rates' days are its days."`
	Today               time.Time `json:"today" description:"The start of today in the organization's timezone."`
	MessagesInToday     int64     `json:"messages_in_today" description:"Messages received since the start of today."`
	MessagesOutToday    int64     `json:"messages_out_today" description:"Messages sent since the start of today (queued ones included)."`
	ActiveConversations int64     `json:"active_conversations" description:"Contacts with a message, either way, in the last 24 hours."`
	WaitingTransfers    int64     `json:"waiting_transfers" description:"Active agent transfers that no agent has yet."`
	CampaignsRunning    int64     `json:"campaigns_running" description:"Campaigns sending now."`
	RateDays            int       `json:"rate_days" description:"How many days, today included, the rates cover (7)."`
	RatesFrom           time.Time `json:"rates_from" description:"The start of the first of those days."`
	Sent                int64     `json:"sent" description:"Outgoing messages of those days the provider took (sent, delivered, read or failed)."`
	Delivered           int64     `json:"delivered" description:"Of those, the delivered or read ones."`
	Read                int64     `json:"read" description:"Of those, the read ones."`
	DeliveryRate        float64   `json:"delivery_rate" description:"delivered as a percent of sent (0 when nothing was sent)."`
	ReadRate            float64   `json:"read_rate" description:"read as a percent of sent (0 when nothing was sent)."`
}

func toOverviewResp(o *widgets.Overview) overviewResp {
	return overviewResp{Timezone: o.Timezone, Today: web.UTC(o.Today), MessagesInToday: o.MessagesInToday, MessagesOutToday: o.MessagesOutToday,
		ActiveConversations: o.ActiveConversations, WaitingTransfers: o.WaitingTransfers, CampaignsRunning: o.CampaignsRunning,
		RateDays: widgets.RateDays, RatesFrom: web.UTC(o.RatesFrom), Sent: o.Sent, Delivered: o.Delivered, Read: o.Read,
		DeliveryRate: o.DeliveryRate, ReadRate: o.ReadRate}
}
