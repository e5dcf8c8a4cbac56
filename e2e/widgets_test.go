package e2e_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
)

type widgetJSON struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	DisplayType  string `json:"display_type"`
	ChartType    string `json:"chart_type"`
	GroupByField string `json:"group_by_field"`
	Size         string `json:"size"`
	ShowChange   bool   `json:"show_change"`
	DisplayOrder int    `json:"display_order"`
	GridX        int    `json:"grid_x"`
	GridY        int    `json:"grid_y"`
	GridW        int    `json:"grid_w"`
	GridH        int    `json:"grid_h"`
	IsShared     bool   `json:"is_shared"`
	IsOwner      bool   `json:"is_owner"`
	Filters      []struct {
		Field, Operator, Value string
	} `json:"filters"`
}

type pointJSON struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

type widgetDataJSON struct {
	WidgetID      string      `json:"widget_id"`
	Value         float64     `json:"value"`
	PrevValue     float64     `json:"prev_value"`
	Change        float64     `json:"change"`
	ChartData     []pointJSON `json:"chart_data"`
	DataPoints    []pointJSON `json:"data_points"`
	GroupedSeries *struct {
		Labels   []string `json:"labels"`
		Datasets []struct {
			Label string    `json:"label"`
			Data  []float64 `json:"data"`
		} `json:"datasets"`
	} `json:"grouped_series"`
	TableRows []map[string]any `json:"table_rows"`
}

// widgetMessages stores messages of the fixture's organization created at
// the given UTC times (direction, type and status as given).
func (f *fixture) widgetMessages(t *testing.T, contactID string, rows ...[4]string) {
	t.Helper()
	for _, r := range rows {
		at, err := time.Parse("2006-01-02 15:04", r[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, occurred_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, f.orgID, contactID, f.accountID, r[1], r[2], r[3], at, at).Error; err != nil {
			t.Fatal(err)
		}
	}
}

// CRUD through the router: defaults, every refusal with its message and
// nothing stored, owner-only changes (403 for a shared widget of another
// user, 404 for a private one and for another organization), shared
// visibility, the share permission, and a layout that changes all or
// nothing.
func TestWidgetsCRUDOwnershipAndLayout(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	manager := f.CreateUser(a, "widget-manager@example.test", "Manager").Auth()
	agent := f.CreateUser(a, "widget-agent@example.test", "Agent").Auth()

	var sources struct {
		DataSources []struct {
			Name          string   `json:"name"`
			Fields        []string `json:"fields"`
			NumericFields []string `json:"numeric_fields"`
		} `json:"data_sources"`
		Metrics   []string `json:"metrics"`
		Operators []struct{ Value, Label string }
	}
	f.Do("GET", "/api/widgets/data-sources", nil, a).Expect(t, 200).Into(t, &sources)
	if len(sources.DataSources) != 5 || sources.DataSources[0].Name != "messages" || len(sources.Operators) != 7 || len(sources.Metrics) != 3 ||
		strings.Join(sources.DataSources[1].Fields, ",") != "platform_account,is_read" {
		t.Fatalf("data sources %+v", sources)
	}

	var w widgetJSON
	f.Do("POST", "/api/widgets", map[string]any{"name": "Inbound", "data_source": "messages", "metric": "count"}, a).Expect(t, 201).Into(t, &w)
	if w.DisplayType != "number" || w.Size != "small" || !w.ShowChange || w.GridW != 3 || w.IsShared || !w.IsOwner {
		t.Fatalf("defaults %+v", w)
	}
	before := f.Count(t)
	for body, want := range map[string]string{
		`{"data_source": "messages", "metric": "count"}`:                                                                                   "name is required",
		`{"name": "x", "metric": "count"}`:                                                                                                 "data_source is required",
		`{"name": "x", "data_source": "users", "metric": "count"}`:                                                                         "data_source must be one of",
		`{"name": "x", "data_source": "messages"}`:                                                                                         "metric must be one of",
		`{"name": "x", "data_source": "messages", "metric": "sum", "field": "status"}`:                                                     `field "status" is not a numeric field of messages`,
		`{"name": "x", "data_source": "messages", "metric": "avg"}`:                                                                        "metric avg needs a field",
		`{"name": "x", "data_source": "messages", "metric": "count", "display_type": "gauge"}`:                                             "display_type must be one of",
		`{"name": "x", "data_source": "messages", "metric": "count", "display_type": "chart", "chart_type": "x"}`:                          "chart_type must be one of",
		`{"name": "x", "data_source": "messages", "metric": "count", "size": "xl"}`:                                                        "size must be one of",
		`{"name": "x", "data_source": "messages", "metric": "count", "group_by_field": "source"}`:                                          `group_by_field "source" is not a field of messages`,
		`{"name": "x", "data_source": "messages", "metric": "count", "filters": [{"field": "body", "operator": "equals", "value": "x"}]}`:  `filter field "body"`,
		`{"name": "x", "data_source": "messages", "metric": "count", "filters": [{"field": "status", "operator": "like", "value": "x"}]}`:  `filter operator "like"`,
		`{"name": "x", "data_source": "messages", "metric": "count", "filters": [{"field": "status", "operator": "lt", "value": "x"}]}`:    "numeric fields only",
		`{"name": "x", "data_source": "messages", "metric": "count", "filters": [{"field": "status", "operator": "equals", "value": {}}]}`: "filter value must be",
		`{"name": "x", "data_source": "messages", "metric": "count", "grid_h": 0}`:                                                         "grid_h must be between 1",
		`{"name": 5}`: "name must be of type string",
	} {
		if r := f.Do("POST", "/api/widgets", rawJSON(t, body), a).Expect(t, 400); !strings.Contains(r.Message, want) {
			t.Errorf("%s: %q, want %q", body, r.Message, want)
		}
	}
	if got := f.Count(t); got != before {
		t.Fatalf("refused creations stored widgets: %d -> %d", before, got)
	}

	// Update: present fields change, group_by_field always applies.
	var chart widgetJSON
	f.Do("POST", "/api/widgets", map[string]any{"name": "By status", "data_source": "messages", "metric": "count", "display_type": "chart",
		"chart_type": "bar", "group_by_field": "status"}, a).Expect(t, 201).Into(t, &chart)
	if chart.GridW != 6 || chart.ChartType != "bar" || chart.DisplayOrder != w.DisplayOrder+1 {
		t.Fatalf("chart %+v", chart)
	}
	if r := f.Do("PUT", "/api/widgets/"+chart.ID, map[string]any{"group_by_field": "is_read"}, a).Expect(t, 400); !strings.Contains(r.Message, "group_by_field") {
		t.Fatal(r.Message)
	}
	f.Do("PUT", "/api/widgets/"+chart.ID, map[string]any{"name": "Renamed", "filters": []map[string]any{{"field": "direction", "operator": "equals", "value": "outgoing"}}}, a).
		Expect(t, 200).Into(t, &chart)
	if chart.Name != "Renamed" || chart.GroupByField != "" || chart.ChartType != "bar" || len(chart.Filters) != 1 || chart.Filters[0].Value != "outgoing" {
		t.Fatalf("updated %+v: group_by_field cleared, the rest kept", chart)
	}

	// Sharing: the manager sees the admin's shared widget, not the private
	// one; may not change either; the agent has no analytics:read at all.
	if r := f.Do("GET", "/api/widgets", nil, agent).Expect(t, 403); !strings.Contains(r.Message, "analytics:read") {
		t.Fatal(r.Message)
	}
	var shared widgetJSON
	f.Do("POST", "/api/widgets", map[string]any{"name": "Team", "data_source": "contacts", "metric": "count", "is_shared": true}, a).Expect(t, 201).Into(t, &shared)
	var list struct{ Widgets []widgetJSON }
	f.Do("GET", "/api/widgets", nil, manager).Expect(t, 200).Into(t, &list)
	if len(list.Widgets) != 1 || list.Widgets[0].ID != shared.ID || list.Widgets[0].IsOwner {
		t.Fatalf("manager sees %+v", list.Widgets)
	}
	f.Do("GET", "/api/widgets/"+shared.ID, nil, manager).Expect(t, 200)
	f.Do("GET", "/api/widgets/"+w.ID, nil, manager).Expect(t, 404)
	f.Do("GET", "/api/widgets/"+w.ID+"/data", nil, manager).Expect(t, 404)
	f.Do("PUT", "/api/widgets/"+shared.ID, map[string]any{"name": "Mine"}, manager).Expect(t, 403)
	f.Do("DELETE", "/api/widgets/"+shared.ID, nil, manager).Expect(t, 403)
	f.Do("PUT", "/api/widgets/"+w.ID, map[string]any{"name": "Mine"}, manager).Expect(t, 404)
	f.Do("DELETE", "/api/widgets/"+w.ID, nil, manager).Expect(t, 404)
	f.Do("GET", "/api/widgets/"+shared.ID, nil, a).Expect(t, 200).Into(t, &shared)
	if shared.Name != "Team" {
		t.Fatalf("changed by a refused update: %+v", shared)
	}

	// A role with analytics:read but not analytics:share may not share.
	var role struct{ ID string }
	f.Do("POST", "/api/roles", map[string]any{"name": "Viewer", "permissions": []string{"analytics:read"}}, a).Expect(t, 201).Into(t, &role)
	f.Do("POST", "/api/users", map[string]any{"email": "viewer@example.test", "password": "password-123", "full_name": "Viewer", "role_id": role.ID}, a).Expect(t, 201)
	viewer := f.Login("viewer@example.test", "password-123").Auth()
	if r := f.Do("POST", "/api/widgets", map[string]any{"name": "V", "data_source": "messages", "metric": "count", "is_shared": true}, viewer).
		Expect(t, 403); !strings.Contains(r.Message, "analytics:share") {
		t.Fatal(r.Message)
	}
	var own widgetJSON
	f.Do("POST", "/api/widgets", map[string]any{"name": "V", "data_source": "messages", "metric": "count"}, viewer).Expect(t, 201).Into(t, &own)
	f.Do("PUT", "/api/widgets/"+own.ID, map[string]any{"is_shared": true}, viewer).Expect(t, 403)

	// Layout: a shared widget of another user or an unknown id refuses the
	// whole layout; a good one places the widgets and orders them.
	place := func(ids ...string) map[string]any {
		var l []map[string]any
		for i, id := range ids {
			l = append(l, map[string]any{"id": id, "grid_x": i, "grid_y": 9, "grid_w": 4, "grid_h": 3})
		}
		return map[string]any{"layout": l}
	}
	f.Do("POST", "/api/widgets/layout", place(own.ID, shared.ID), viewer).Expect(t, 403)
	f.Do("POST", "/api/widgets/layout", place(own.ID, w.ID), viewer).Expect(t, 404)
	f.Do("POST", "/api/widgets/layout", place(own.ID, "not-an-id"), viewer).Expect(t, 400)
	f.Do("POST", "/api/widgets/layout", map[string]any{"layout": []any{}}, viewer).Expect(t, 400)
	var moved int64
	f.DB.Raw(`SELECT count(*) FROM dashboard_widgets WHERE grid_y = 9`).Scan(&moved)
	if moved != 0 {
		t.Fatalf("%d widgets moved by refused layouts", moved)
	}
	f.Do("POST", "/api/widgets/layout", place(shared.ID, chart.ID, w.ID), a).Expect(t, 200)
	f.Do("GET", "/api/widgets", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Widgets) != 3 || list.Widgets[0].ID != shared.ID || list.Widgets[1].ID != chart.ID || list.Widgets[2].GridX != 2 || list.Widgets[2].GridY != 9 {
		t.Fatalf("after layout %+v", list.Widgets)
	}

	// Another organization: 404 for each route with an id.
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Widgets B"}, a).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, a).Expect(t, 200).Into(t, &inB)
	for _, c := range []struct{ method, path string }{{"GET", ""}, {"PUT", ""}, {"DELETE", ""}, {"GET", "/data"}} {
		f.Do(c.method, "/api/widgets/"+shared.ID+c.path, map[string]any{"name": "x"}, inB.Auth()).Expect(t, 404)
	}
	f.Do("POST", "/api/widgets/layout", place(shared.ID), inB.Auth()).Expect(t, 404)
	f.Do("GET", "/api/widgets", nil, inB.Auth()).Expect(t, 200).Into(t, &list)
	if len(list.Widgets) != 0 {
		t.Fatalf("organization B sees %+v", list.Widgets)
	}

	f.Do("DELETE", "/api/widgets/"+w.ID, nil, a).Expect(t, 200)
	f.Do("GET", "/api/widgets/"+w.ID, nil, a).Expect(t, 404)
}

// Count is the number of stored widgets.
func (f *fixture) Count(t *testing.T) int64 {
	var n int64
	if err := f.DB.Raw(`SELECT count(*) FROM dashboard_widgets`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// Widget data through the router: a daily chart and a number around a
// month boundary, grouped bar, pie, line and table shapes, filters, sum
// and avg, the period's refusals, and every widget's data at once.
func TestWidgetDataAroundAMonthBoundary(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	var c struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550301001", "name": "Dana"}, a).Expect(t, 201).Into(t, &c)
	f.widgetMessages(t, c.ID,
		[4]string{"2024-03-30 10:00", "incoming", "text", "received"},
		[4]string{"2024-03-31 00:00", "incoming", "text", "received"},
		[4]string{"2024-03-31 23:59", "outgoing", "text", "read"},
		[4]string{"2024-04-01 00:00", "outgoing", "image", "delivered"},
		[4]string{"2024-04-01 12:00", "outgoing", "text", "failed"},
		[4]string{"2024-04-02 09:00", "incoming", "text", "received"},
	)
	create := func(body map[string]any) string {
		t.Helper()
		body["name"] = "w"
		if body["data_source"] == nil {
			body["data_source"], body["metric"] = "messages", "count"
		}
		var w widgetJSON
		f.Do("POST", "/api/widgets", body, a).Expect(t, 201).Into(t, &w)
		return w.ID
	}
	data := func(id, from, to string) widgetDataJSON {
		t.Helper()
		var d widgetDataJSON
		f.Do("GET", fmt.Sprintf("/api/widgets/%s/data?from=%s&to=%s", id, from, to), nil, a).Expect(t, 200).Into(t, &d)
		return d
	}

	daily := create(map[string]any{"display_type": "chart", "chart_type": "line"})
	d := data(daily, "2024-04-01", "2024-04-03")
	if d.Value != 3 || d.PrevValue != 3 || d.Change != 0 || len(d.ChartData) != 3 ||
		d.ChartData[0] != (pointJSON{"2024-04-01", 2}) || d.ChartData[1] != (pointJSON{"2024-04-02", 1}) || d.ChartData[2] != (pointJSON{"2024-04-03", 0}) {
		t.Fatalf("April 1-3: %+v", d)
	}
	d = data(daily, "2024-03-31", "2024-04-01")
	if d.Value != 4 || d.PrevValue != 1 || d.Change != 300 || d.ChartData[0] != (pointJSON{"2024-03-31", 2}) || d.GroupedSeries != nil {
		t.Fatalf("Mar 31-Apr 1: %+v", d)
	}
	d = data(daily, "2024-03-30", "2024-03-30")
	if d.Value != 1 || d.PrevValue != 0 || d.Change != 100 {
		t.Fatalf("Mar 30: %+v (only the previous figure 0: change 100)", d)
	}
	d = data(daily, "2024-04-10", "2024-04-11")
	if d.Value != 0 || d.PrevValue != 0 || d.Change != 0 || len(d.ChartData) != 2 || d.ChartData[1].Value != 0 {
		t.Fatalf("empty: %+v", d)
	}

	pie := create(map[string]any{"display_type": "chart", "chart_type": "pie", "group_by_field": "direction"})
	if d := data(pie, "2024-03-31", "2024-04-02"); len(d.DataPoints) != 2 || d.DataPoints[0] != (pointJSON{"outgoing", 3}) || d.DataPoints[1] != (pointJSON{"incoming", 2}) || len(d.ChartData) != 0 {
		t.Fatalf("pie %+v", d)
	}
	bar := create(map[string]any{"display_type": "chart", "chart_type": "bar", "group_by_field": "platform_account"})
	if d := data(bar, "2024-03-31", "2024-04-02"); len(d.DataPoints) != 1 || d.DataPoints[0] != (pointJSON{"Main", 5}) {
		t.Fatalf("bar by account %+v", d)
	}
	line := create(map[string]any{"display_type": "chart", "chart_type": "line", "group_by_field": "message_type"})
	d = data(line, "2024-03-31", "2024-04-02")
	if s := d.GroupedSeries; s == nil || strings.Join(s.Labels, ",") != "2024-03-31,2024-04-01,2024-04-02" || len(s.Datasets) != 2 ||
		s.Datasets[0].Label != "text" || fmt.Sprint(s.Datasets[0].Data) != "[2 1 1]" || s.Datasets[1].Label != "image" || fmt.Sprint(s.Datasets[1].Data) != "[0 1 0]" {
		t.Fatalf("grouped line %+v", d.GroupedSeries)
	}
	table := create(map[string]any{"display_type": "table", "filters": []map[string]any{{"field": "direction", "operator": "equals", "value": "outgoing"}}})
	d = data(table, "2024-03-31", "2024-04-02")
	if len(d.TableRows) != 3 || d.TableRows[0]["status"] != "failed" || d.TableRows[0]["created_at"] != "2024-04-01T12:00:00Z" || d.TableRows[0]["platform_account"] != "Main" {
		t.Fatalf("table rows %+v", d.TableRows)
	}
	groupedTable := create(map[string]any{"display_type": "table", "group_by_field": "status"})
	if d := data(groupedTable, "2024-03-31", "2024-04-02"); len(d.DataPoints) != 4 || len(d.TableRows) != 0 {
		t.Fatalf("grouped table %+v", d)
	}
	for filter, want := range map[string]float64{
		`{"field": "status", "operator": "not_equals", "value": "received"}`:   3,
		`{"field": "message_type", "operator": "contains", "value": "IMA"}`:    1,
		`{"field": "platform_account", "operator": "equals", "value": "Main"}`: 5,
	} {
		id := create(map[string]any{"filters": []any{rawJSON(t, filter)}})
		if d := data(id, "2024-03-31", "2024-04-02"); d.Value != want {
			t.Errorf("%s: %v, want %v", filter, d.Value, want)
		}
	}
	pct := create(map[string]any{"display_type": "percentage", "filters": []map[string]any{{"field": "direction", "operator": "equals", "value": "incoming"}}})
	if d := data(pct, "2024-03-31", "2024-04-02"); d.Value != 40 {
		t.Fatalf("percentage %+v", d)
	}
	// sum and avg over a numeric field of transfers.
	f.DB.Exec(`INSERT INTO agent_transfers (organization_id, contact_id, status, source, transferred_at, assigned_at) VALUES
		(?, ?, 'resumed', 'manual', '2024-04-01 10:00Z', '2024-04-01 10:02Z'), (?, ?, 'resumed', 'chatbot', '2024-04-02 10:00Z', '2024-04-02 10:00:30Z')`,
		f.orgID, c.ID, f.orgID, c.ID)
	sum := create(map[string]any{"data_source": "transfers", "metric": "sum", "field": "wait_seconds"})
	avg := create(map[string]any{"data_source": "transfers", "metric": "avg", "field": "wait_seconds", "filters": []map[string]any{{"field": "wait_seconds", "operator": "gt", "value": 60}}})
	if d := data(sum, "2024-04-01", "2024-04-02"); d.Value != 150 {
		t.Fatalf("sum %+v", d)
	}
	if d := data(avg, "2024-04-01", "2024-04-02"); d.Value != 120 {
		t.Fatalf("avg %+v", d)
	}
	if r := f.Do("POST", "/api/widgets", map[string]any{"name": "x", "data_source": "transfers", "metric": "sum", "field": "source"}, a).Expect(t, 400); !strings.Contains(r.Message, "not a numeric field") {
		t.Fatal(r.Message)
	}

	for q, want := range map[string]string{
		"from=2024-04-02&to=2024-04-01": "is after", "from=2023-01-01&to=2024-04-01": "longer than 366 days", "from=April": "from must be a date",
	} {
		if r := f.Do("GET", "/api/widgets/"+daily+"/data?"+q, nil, a).Expect(t, 400); !strings.Contains(r.Message, want) {
			t.Errorf("%s: %q", q, r.Message)
		}
	}
	// The default period is the current month so far.
	f.Do("GET", "/api/widgets/"+daily+"/data", nil, a).Expect(t, 200).Into(t, &d)
	if now := time.Now().UTC(); len(d.ChartData) != now.Day() || d.ChartData[0].Label != now.Format("2006-01")+"-01" {
		t.Fatalf("default period: %d points from %v", len(d.ChartData), d.ChartData[0])
	}

	var all struct{ Data map[string]widgetDataJSON }
	f.Do("GET", "/api/widgets/data?from=2024-03-31&to=2024-04-02", nil, a).Expect(t, 200).Into(t, &all)
	if len(all.Data) != 12 || all.Data[pie].DataPoints[0].Value != 3 || all.Data[daily].Value != 5 {
		t.Fatalf("all data: %d widgets, %+v", len(all.Data), all.Data[daily])
	}
}

// rawJSON decodes a JSON literal into a value to send.
func rawJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A user has at most 50 widgets: the 51st is a 409 that stores nothing;
// another user of the organization still creates theirs.
func TestWidgetsPerUserAreBoundedThroughTheRouter(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	a := e.Admin().Auth()
	body := map[string]any{"name": "Inbound", "data_source": "messages", "metric": "count"}
	for range 50 {
		e.Do("POST", "/api/widgets", body, a).Expect(t, 201)
	}
	if r := e.Do("POST", "/api/widgets", body, a).Expect(t, 409); r.Message != "you have 50 widgets, the most a user may have; delete one first" {
		t.Fatalf("51st widget: %q", r.Message)
	}
	var list struct {
		Widgets []widgetJSON `json:"widgets"`
	}
	e.Do("GET", "/api/widgets", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Widgets) != 50 {
		t.Fatalf("%d widgets after the refusal", len(list.Widgets))
	}
	manager := e.CreateUser(a, "widgets-manager@example.test", "Manager")
	e.Do("POST", "/api/widgets", body, manager.Auth()).Expect(t, 201)
}

// The dashboard's fixed tiles through the router: messages received from
// the provider and sent through the API count today, their contacts are
// active conversations, the provider's statuses make the rates; a user
// without analytics:read is refused in the error envelope.
func TestAnalyticsOverview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	a := f.admin.Auth()
	first := f.contactFromIncoming(t, "15550007101", "Ana", "hello")
	f.contactFromIncoming(t, "15550007102", "Bo", "hi there")
	var sent sentAnswer
	f.Do("POST", "/api/contacts/"+first+"/messages", map[string]any{"type": "text", "text": "Welcome"}, a).Expect(t, 201).Into(t, &sent)
	f.waitStatus(t, sent.ID, "read")

	var o struct {
		Timezone            string    `json:"timezone"`
		Today               time.Time `json:"today"`
		MessagesInToday     int       `json:"messages_in_today"`
		MessagesOutToday    int       `json:"messages_out_today"`
		ActiveConversations int       `json:"active_conversations"`
		WaitingTransfers    int       `json:"waiting_transfers"`
		CampaignsRunning    int       `json:"campaigns_running"`
		RateDays            int       `json:"rate_days"`
		Sent                int       `json:"sent"`
		Delivered           int       `json:"delivered"`
		Read                int       `json:"read"`
		DeliveryRate        float64   `json:"delivery_rate"`
		ReadRate            float64   `json:"read_rate"`
	}
	f.Do("GET", "/api/analytics/overview", nil, a).Expect(t, 200).Into(t, &o)
	if o.Timezone != "UTC" || o.Today.IsZero() || o.MessagesInToday != 2 || o.MessagesOutToday != 1 || o.ActiveConversations != 2 ||
		o.WaitingTransfers != 0 || o.CampaignsRunning != 0 || o.RateDays != 7 || o.Sent != 1 || o.Delivered != 1 || o.Read != 1 ||
		o.DeliveryRate != 100 || o.ReadRate != 100 {
		t.Fatalf("overview %+v", o)
	}
	// A transfer to the agents' queue waits until someone takes it.
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": first}, a).Expect(t, 201)
	f.Do("GET", "/api/analytics/overview", nil, a).Expect(t, 200).Into(t, &o)
	if o.WaitingTransfers != 1 {
		t.Fatalf("waiting transfers %d", o.WaitingTransfers)
	}

	agent := f.CreateUser(a, "overview-agent@example.test", "Agent").Auth()
	if r := f.Do("GET", "/api/analytics/overview", nil, agent).Expect(t, 403); !strings.Contains(r.Message, "analytics:read") {
		t.Fatalf("agent refused with %q", r.Message)
	}
}
