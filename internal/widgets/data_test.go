package widgets_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/testfactory"
	"wharf/internal/widgets"
	"wharf/models"
)

func day(s string) time.Time {
	d, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		panic(err)
	}
	return d
}

func period(t *testing.T, from, to string) widgets.Period {
	t.Helper()
	p, err := widgets.ParsePeriod(from, to, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// msg stores a message of the organization created at when (UTC).
func msg(t *testing.T, f *testfactory.Factory, orgID, contactID uuid.UUID, acc *uuid.UUID, when, direction, typ, status string) {
	t.Helper()
	at := day(when)
	var sent, delivered *time.Time
	if direction == "outgoing" {
		d := at.Add(time.Duration(len(status)) * time.Second)
		sent, delivered = &at, &d
	}
	if err := f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, occurred_at, created_at,
		sent_at, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, orgID, contactID, acc, direction, typ, status, at, at,
		sent, delivered).Error; err != nil {
		t.Fatal(err)
	}
}

func TestParsePeriod(t *testing.T) {
	t.Parallel()
	now := day("2024-03-17 15:00")
	p, err := widgets.ParsePeriod("", "", now)
	if err != nil || p.From != day("2024-03-01 00:00") || p.To != day("2024-03-17 00:00") || p.Days() != 17 {
		t.Fatalf("default %+v, %v: want the month so far", p, err)
	}
	if prev := p.Previous(); prev.From != day("2024-02-13 00:00") || prev.To != day("2024-02-29 00:00") {
		t.Fatalf("previous %+v", prev)
	}
	if p, _ := widgets.ParsePeriod("", "2024-02-10", now); p.From != day("2024-02-01 00:00") {
		t.Fatalf("only to: %+v", p)
	}
	for _, c := range []struct{ from, to, want string }{
		{"2024-03-02", "2024-03-01", "is after"}, {"2023-01-01", "2024-01-02", "longer than 366 days"},
		{"03/01/2024", "", "from must be a date"}, {"", "tomorrow", "to must be a date"},
	} {
		_, err := widgets.ParsePeriod(c.from, c.to, now)
		testfactory.WantError(t, err, apperr.Invalid, c.want)
	}
	if _, err := widgets.ParsePeriod("2024-01-01", "2024-12-31", now); err != nil {
		t.Fatalf("a leap year is allowed: %v", err)
	}
	if widgets.Change(0, 0) != 0 || widgets.Change(5, 0) != 100 || widgets.Change(3, 4) != -25 || widgets.Change(4, 3) != 33.33 {
		t.Fatal("change")
	}
}

// Around a month boundary: the value is the period's, prev_value the same
// number of days before it, a daily chart has a point for every day.
func TestDataAroundAMonthBoundary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	acc := b.f.Account(b.org.ID)
	c := b.f.Contact(b.org.ID, &acc.ID)
	// Two on Jan 31 (one a second before midnight), three on Feb 1, one on
	// Feb 3, one on Jan 29 (the previous period of Feb 1-3 is Jan 29-31).
	for _, at := range []string{"2024-01-29 12:00", "2024-01-31 00:00", "2024-01-31 23:59", "2024-02-01 00:00", "2024-02-01 08:00",
		"2024-02-01 23:59", "2024-02-03 10:00", "2024-02-04 00:00"} {
		msg(t, b.f, b.org.ID, c.ID, &acc.ID, at, "incoming", "text", "received")
	}
	// Another organization's messages never count.
	otherOrg := b.f.Org()
	oc := b.f.Contact(otherOrg.ID, nil)
	msg(t, b.f, otherOrg.ID, oc.ID, nil, "2024-02-01 10:00", "incoming", "text", "received")

	w, err := b.s.Create(ctx, b.owner, widgets.Input{Name: str("Daily"), DataSource: str("messages"), Metric: str("count"), DisplayType: str("chart")})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.s.WidgetData(ctx, b.owner, w.ID, period(t, "2024-02-01", "2024-02-03"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Value != 4 || d.PrevValue != 3 || d.Change != 33.33 {
		t.Fatalf("value %v prev %v change %v, want 4, 3, 33.33", d.Value, d.PrevValue, d.Change)
	}
	want := []widgets.Point{{"2024-02-01", 3}, {"2024-02-02", 0}, {"2024-02-03", 1}}
	if len(d.ChartData) != 3 || d.ChartData[0] != want[0] || d.ChartData[1] != want[1] || d.ChartData[2] != want[2] {
		t.Fatalf("chart %v, want %v", d.ChartData, want)
	}
	if d.GroupedSeries != nil || len(d.DataPoints) != 0 || len(d.TableRows) != 0 {
		t.Fatalf("ungrouped chart has other shapes: %+v", d)
	}
	d, err = b.s.WidgetData(ctx, b.owner, w.ID, period(t, "2024-01-31", "2024-01-31"))
	if err != nil || d.Value != 2 || d.PrevValue != 0 || d.Change != 100 || len(d.ChartData) != 1 || d.ChartData[0].Value != 2 {
		t.Fatalf("Jan 31: %+v, %v (only the previous figure 0: change 100)", d, err)
	}
	d, err = b.s.WidgetData(ctx, b.owner, w.ID, period(t, "2024-02-05", "2024-02-06"))
	if err != nil || d.Value != 0 || d.PrevValue != 2 || d.Change != -100 || len(d.ChartData) != 2 || d.ChartData[1] != (widgets.Point{"2024-02-06", 0}) {
		t.Fatalf("empty period: %+v, %v", d, err)
	}
}

// Grouped shapes, filters of every operator, sum and avg over a numeric
// field, percentages, and latest records.
func TestDataShapesAndFilters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	main := b.f.Account(b.org.ID, func(a *models.PlatformAccount) { a.Name = "Main line" })
	c := b.f.Contact(b.org.ID, &main.ID)
	// delivered_at - sent_at is len(status) seconds: read 4, sent 4, failed 6, delivered 9.
	for _, m := range []struct{ at, dir, typ, status string }{
		{"2024-05-01 09:00", "outgoing", "text", "read"},
		{"2024-05-01 10:00", "outgoing", "text", "delivered"},
		{"2024-05-02 10:00", "outgoing", "image", "failed"},
		{"2024-05-02 11:00", "incoming", "text", "received"},
		{"2024-05-03 11:00", "outgoing", "template", "sent"},
	} {
		msg(t, b.f, b.org.ID, c.ID, &main.ID, m.at, m.dir, m.typ, m.status)
	}
	msg(t, b.f, b.org.ID, c.ID, nil, "2024-05-03 12:00", "incoming", "text", "received") // no account
	p := period(t, "2024-05-01", "2024-05-03")
	data := func(in widgets.Input) *widgets.Data {
		t.Helper()
		if in.Name == nil {
			in.Name = str("w")
		}
		if in.DataSource == nil {
			in.DataSource = str("messages")
		}
		if in.Metric == nil {
			in.Metric = str("count")
		}
		w, err := b.s.Create(ctx, b.owner, in)
		if err != nil {
			t.Fatal(err)
		}
		d, err := b.s.WidgetData(ctx, b.owner, w.ID, p)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	f := func(field, op string, v any) *[]widgets.FilterInput {
		return filters(widgets.FilterInput{field, op, v})
	}
	for name, c := range map[string]struct {
		in   widgets.Input
		want float64
	}{
		"equals":                {widgets.Input{Filters: f("direction", "equals", "outgoing")}, 4},
		"not_equals":            {widgets.Input{Filters: f("direction", "not_equals", "outgoing")}, 2},
		"contains":              {widgets.Input{Filters: f("message_type", "contains", "TEMP")}, 1},
		"contains is literal":   {widgets.Input{Filters: f("status", "contains", "%")}, 0},
		"account equals":        {widgets.Input{Filters: f("platform_account", "equals", "Main line")}, 5},
		"account not_equals":    {widgets.Input{Filters: f("platform_account", "not_equals", "Main line")}, 1},
		"gt":                    {widgets.Input{Filters: f("delivery_seconds", "gt", 4)}, 2},
		"gte":                   {widgets.Input{Filters: f("delivery_seconds", "gte", "4")}, 4},
		"lt":                    {widgets.Input{Filters: f("delivery_seconds", "lt", 6)}, 2},
		"lte":                   {widgets.Input{Filters: f("delivery_seconds", "lte", 6.0)}, 3},
		"two filters":           {widgets.Input{Filters: filters(widgets.FilterInput{"direction", "equals", "outgoing"}, widgets.FilterInput{"message_type", "equals", "text"})}, 2},
		"sum":                   {widgets.Input{Metric: str("sum"), Field: str("delivery_seconds"), Filters: f("direction", "equals", "outgoing")}, 23},
		"avg":                   {widgets.Input{Metric: str("avg"), Field: str("delivery_seconds"), Filters: f("direction", "equals", "outgoing")}, 5.75},
		"percentage of all":     {widgets.Input{DisplayType: str("percentage"), Filters: f("status", "equals", "received")}, 33.33},
		"percentage unfiltered": {widgets.Input{DisplayType: str("percentage")}, 100},
	} {
		if d := data(c.in); d.Value != c.want {
			t.Errorf("%s: value %v, want %v", name, d.Value, c.want)
		}
	}

	d := data(widgets.Input{DisplayType: str("chart"), ChartType: str("pie"), GroupByField: str("direction")})
	if len(d.DataPoints) != 2 || d.DataPoints[0] != (widgets.Point{"outgoing", 4}) || d.DataPoints[1] != (widgets.Point{"incoming", 2}) || len(d.ChartData) != 0 {
		t.Fatalf("pie %+v", d)
	}
	d = data(widgets.Input{DisplayType: str("chart"), ChartType: str("bar"), GroupByField: str("platform_account")})
	if len(d.DataPoints) != 2 || d.DataPoints[0] != (widgets.Point{"Main line", 5}) || d.DataPoints[1] != (widgets.Point{"", 1}) {
		t.Fatalf("bar by account %+v", d.DataPoints)
	}
	d = data(widgets.Input{DisplayType: str("table"), GroupByField: str("status"), Filters: f("direction", "equals", "outgoing")})
	if len(d.DataPoints) != 4 || len(d.TableRows) != 0 {
		t.Fatalf("grouped table %+v", d)
	}
	d = data(widgets.Input{DisplayType: str("chart"), ChartType: str("line"), GroupByField: str("direction")})
	s := d.GroupedSeries
	if s == nil || len(s.Labels) != 3 || s.Labels[0] != "2024-05-01" || len(s.Datasets) != 2 {
		t.Fatalf("grouped line %+v", s)
	}
	if ds := s.Datasets[0]; ds.Label != "outgoing" || len(ds.Data) != 3 || ds.Data[0] != 2 || ds.Data[1] != 1 || ds.Data[2] != 1 {
		t.Fatalf("outgoing series %+v", ds)
	}
	if ds := s.Datasets[1]; ds.Label != "incoming" || ds.Data[0] != 0 || ds.Data[1] != 1 || ds.Data[2] != 1 {
		t.Fatalf("incoming series %+v", ds)
	}
	d = data(widgets.Input{DisplayType: str("table"), Filters: f("direction", "equals", "outgoing")})
	if len(d.TableRows) != 4 || d.TableRows[0]["status"] != "sent" || d.TableRows[0]["platform_account"] != "Main line" ||
		d.TableRows[0]["created_at"].(time.Time) != day("2024-05-03 11:00") || d.TableRows[0]["id"] == "" {
		t.Fatalf("table rows %+v", d.TableRows)
	}
	if _, ok := d.TableRows[0]["content"]; ok {
		t.Fatal("table rows show message content")
	}

	all, err := b.s.AllData(ctx, b.owner, p)
	if err != nil || len(all) < 15 {
		t.Fatalf("all data: %d, %v", len(all), err)
	}
}

// The other sources: contacts read or not, campaigns by their recipients'
// statuses and summed counts, transfers' waits, sessions' statuses.
func TestDataOfEachSource(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	acc := b.f.Account(b.org.ID)
	today := time.Now().UTC().Format("2006-01-02")
	p := period(t, today, today)
	now := time.Now().UTC().Format("2006-01-02 15:04")
	answered := b.f.Contact(b.org.ID, &acc.ID)
	waiting := b.f.Contact(b.org.ID, &acc.ID)
	b.f.Contact(b.org.ID, nil) // no messages: read
	msg(t, b.f, b.org.ID, answered.ID, &acc.ID, now, "incoming", "text", "received")
	if err := b.f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, direction, type, status, occurred_at)
		VALUES (?, ?, 'outgoing', 'text', 'sent', now() + interval '1 second')`, b.org.ID, answered.ID).Error; err != nil {
		t.Fatal(err)
	}
	msg(t, b.f, b.org.ID, waiting.ID, &acc.ID, now, "incoming", "text", "received")

	tmpl := b.f.Template(acc, "Hi {{1}}")
	c1, recs := b.f.Campaign(tmpl, 3, func(c *models.Campaign) { c.Status = models.CampaignCompleted; c.SentCount = 3 })
	b.f.Campaign(tmpl, 2, func(c *models.Campaign) { c.SentCount = 1 })
	if err := b.f.DB.Exec(`UPDATE campaign_recipients SET status = 'failed' WHERE id = ?`, recs[0].ID).Error; err != nil {
		t.Fatal(err)
	}
	_ = c1

	if err := b.f.DB.Exec(`INSERT INTO agent_transfers (organization_id, contact_id, status, source, transferred_at, assigned_at)
		VALUES (?, ?, 'resumed', 'chatbot', now() - interval '90 seconds', now() - interval '30 seconds'),
		       (?, ?, 'active', 'manual', now(), NULL)`, b.org.ID, answered.ID, b.org.ID, waiting.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := b.f.DB.Exec(`INSERT INTO chatbot_sessions (organization_id, contact_id, started_at, ended_at, end_reason)
		VALUES (?, ?, now(), NULL, ''), (?, ?, now(), now(), 'transfer')`, b.org.ID, answered.ID, b.org.ID, waiting.ID).Error; err != nil {
		t.Fatal(err)
	}

	value := func(in widgets.Input) *widgets.Data {
		t.Helper()
		in.Name = str("w")
		if in.Metric == nil {
			in.Metric = str("count")
		}
		w, err := b.s.Create(ctx, b.owner, in)
		if err != nil {
			t.Fatal(err)
		}
		d, err := b.s.WidgetData(ctx, b.owner, w.ID, p)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	f := func(field, op string, v any) *[]widgets.FilterInput {
		return filters(widgets.FilterInput{field, op, v})
	}
	for name, c := range map[string]struct {
		in   widgets.Input
		want float64
	}{
		"contacts":               {widgets.Input{DataSource: str("contacts")}, 3},
		"unread contacts":        {widgets.Input{DataSource: str("contacts"), Filters: f("is_read", "equals", false)}, 1},
		"read contacts":          {widgets.Input{DataSource: str("contacts"), Filters: f("is_read", "equals", "true")}, 2},
		"campaigns":              {widgets.Input{DataSource: str("campaigns")}, 2},
		"campaigns with failure": {widgets.Input{DataSource: str("campaigns"), Filters: f("message_status", "equals", "failed")}, 1},
		"recipients summed":      {widgets.Input{DataSource: str("campaigns"), Metric: str("sum"), Field: str("total_recipients")}, 5},
		"completed campaigns":    {widgets.Input{DataSource: str("campaigns"), Filters: f("status", "equals", "completed")}, 1},
		"big campaigns":          {widgets.Input{DataSource: str("campaigns"), Filters: f("total_recipients", "gte", 3)}, 1},
		"transfers":              {widgets.Input{DataSource: str("transfers")}, 2},
		"wait avg":               {widgets.Input{DataSource: str("transfers"), Metric: str("avg"), Field: str("wait_seconds")}, 60},
		"chatbot transfers":      {widgets.Input{DataSource: str("transfers"), Filters: f("source", "equals", "chatbot")}, 1},
		"active sessions":        {widgets.Input{DataSource: str("sessions"), Filters: f("status", "equals", "active")}, 1},
	} {
		if d := value(c.in); d.Value != c.want {
			t.Errorf("%s: value %v, want %v", name, d.Value, c.want)
		}
	}
	d := value(widgets.Input{DataSource: str("campaigns"), DisplayType: str("chart"), ChartType: str("bar"), GroupByField: str("message_status")})
	if len(d.DataPoints) != 2 || d.DataPoints[0] != (widgets.Point{"pending", 2}) || d.DataPoints[1] != (widgets.Point{"failed", 1}) {
		t.Fatalf("campaigns by recipients' status %+v", d.DataPoints)
	}
	d = value(widgets.Input{DataSource: str("sessions"), DisplayType: str("table"), GroupByField: str("status")})
	if len(d.DataPoints) != 2 {
		t.Fatalf("sessions by status %+v", d.DataPoints)
	}
	d = value(widgets.Input{DataSource: str("transfers"), DisplayType: str("table")})
	if len(d.TableRows) != 2 || d.TableRows[1]["wait_seconds"] != 60.0 || d.TableRows[0]["wait_seconds"] != nil {
		t.Fatalf("transfer rows %+v", d.TableRows)
	}
	d = value(widgets.Input{DataSource: str("contacts"), DisplayType: str("chart"), ChartType: str("pie"), GroupByField: str("is_read")})
	if len(d.DataPoints) != 2 || d.DataPoints[0] != (widgets.Point{"true", 2}) {
		t.Fatalf("contacts by read %+v", d.DataPoints)
	}
}
