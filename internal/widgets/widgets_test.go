package widgets_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/widgets"
	"wharf/models"
)

type testBundle struct {
	s   *widgets.Service
	f   *testfactory.Factory
	org *testfactory.Org
	// owner and other are managers of org (they may share); agent may not.
	owner, other, agent widgets.Caller
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	caller := func(role string, share bool) widgets.Caller {
		return widgets.Caller{OrgID: org.ID, UserID: f.User(org, role).ID, CanShare: share}
	}
	return &testBundle{s: widgets.NewService(f.DB, orgsettings.NewService(f.DB, f.Box, nil, nil)), f: f, org: org,
		owner: caller(identity.RoleManager, true), other: caller(identity.RoleManager, true), agent: caller(identity.RoleAgent, false)}
}

func str(s string) *string { return &s }
func yes() *bool           { b := true; return &b }
func num(n int) *int       { return &n }

func number(source string) widgets.Input {
	return widgets.Input{Name: str("Messages"), DataSource: str(source), Metric: str("count")}
}

func filters(fs ...widgets.FilterInput) *[]widgets.FilterInput { return &fs }

// Every invalid widget is refused with a message that names the problem,
// on create and on update, and nothing is stored.
func TestCreateAndUpdateValidate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	with := func(fn func(*widgets.Input)) widgets.Input {
		in := number("messages")
		fn(&in)
		return in
	}
	for want, in := range map[string]widgets.Input{
		"name is required":                       {DataSource: str("messages"), Metric: str("count")},
		"data_source is required":                {Name: str("x"), Metric: str("count")},
		"data_source must be one of":             with(func(in *widgets.Input) { in.DataSource = str("users") }),
		"metric must be one of":                  with(func(in *widgets.Input) { in.Metric = str("max") }),
		"metric sum needs a field":               with(func(in *widgets.Input) { in.Metric = str("sum") }),
		`field "status" is not a numeric field`:  with(func(in *widgets.Input) { in.Metric, in.Field = str("sum"), str("status") }),
		"which has none":                         {Name: str("x"), DataSource: str("contacts"), Metric: str("avg"), Field: str("is_read")},
		"display_type must be one of":            with(func(in *widgets.Input) { in.DisplayType = str("gauge") }),
		"chart_type must be one of":              with(func(in *widgets.Input) { in.DisplayType, in.ChartType = str("chart"), str("donut") }),
		"size must be one of":                    with(func(in *widgets.Input) { in.Size = str("huge") }),
		`group_by_field "source" is not a field`: with(func(in *widgets.Input) { in.GroupByField = str("source") }),
		`filter field "content" is not a field`:  with(func(in *widgets.Input) { in.Filters = filters(widgets.FilterInput{"content", "equals", "x"}) }),
		`filter operator "like" is not one of`:   with(func(in *widgets.Input) { in.Filters = filters(widgets.FilterInput{"status", "like", "x"}) }),
		"gt applies to numeric fields only":      with(func(in *widgets.Input) { in.Filters = filters(widgets.FilterInput{"status", "gt", "x"}) }),
		"contains applies to text fields only": with(func(in *widgets.Input) {
			in.Filters = filters(widgets.FilterInput{"delivery_seconds", "contains", "1"})
		}),
		"needs a numeric value":                      with(func(in *widgets.Input) { in.Filters = filters(widgets.FilterInput{"delivery_seconds", "gte", "soon"}) }),
		"filter value must be a string":              with(func(in *widgets.Input) { in.Filters = filters(widgets.FilterInput{"status", "equals", []any{1}}) }),
		"grid_w must be between 1":                   with(func(in *widgets.Input) { in.GridW = num(0) }),
		"grid_x must be between 0":                   with(func(in *widgets.Input) { in.GridX = num(-1) }),
		"need a data_source":                         {Name: str("Links"), DisplayType: str("shortcuts"), GroupByField: str("status")},
		"sharing a widget needs the analytics:share": with(func(in *widgets.Input) { in.IsShared = yes() }),
	} {
		caller := b.owner
		if want == "sharing a widget needs the analytics:share" {
			caller = b.agent
		}
		_, err := b.s.Create(ctx, caller, in)
		kind := apperr.Invalid
		if caller == b.agent {
			kind = apperr.Forbidden
		}
		testfactory.WantError(t, err, kind, want)
	}
	if n := b.f.Count("dashboard_widgets", ""); n != 0 {
		t.Fatalf("%d widgets stored by refused creations", n)
	}

	// Defaults: number, small, show_change, the grid of its type; a chart
	// defaults to a line chart on a larger tile; shortcuts need no source.
	w, err := b.s.Create(ctx, b.owner, number("messages"))
	if err != nil || w.DisplayType != "number" || w.Size != "small" || !w.ShowChange || w.GridW != 3 || w.GridH != 2 || w.IsShared {
		t.Fatalf("defaults: %+v, %v", w, err)
	}
	c, err := b.s.Create(ctx, b.owner, widgets.Input{Name: str("Daily"), DataSource: str("messages"), Metric: str("count"), DisplayType: str("chart"),
		GroupByField: str("status")})
	if err != nil || c.ChartType != "line" || c.GridW != 6 || c.GridH != 4 || c.DisplayOrder != w.DisplayOrder+1 || c.GroupByField != "status" {
		t.Fatalf("chart defaults: %+v, %v", c, err)
	}
	if _, err := b.s.Create(ctx, b.owner, widgets.Input{Name: str("Links"), DisplayType: str("shortcuts"), Config: &map[string]any{"links": []any{"/inbox"}}}); err != nil {
		t.Fatal(err)
	}

	// Updates: group_by_field is checked against the (new) source, and an
	// update without it clears it; other absent fields stay.
	_, err = b.s.Update(ctx, b.owner, c.ID, widgets.Input{GroupByField: str("is_read")})
	testfactory.WantError(t, err, apperr.Invalid, `group_by_field "is_read" is not a field of messages`)
	_, err = b.s.Update(ctx, b.owner, c.ID, widgets.Input{DataSource: str("transfers"), GroupByField: str("status"),
		Filters: filters(widgets.FilterInput{"direction", "equals", "incoming"})})
	testfactory.WantError(t, err, apperr.Invalid, `filter field "direction" is not a field of transfers`)
	_, err = b.s.Update(ctx, b.owner, c.ID, widgets.Input{Metric: str("avg")})
	testfactory.WantError(t, err, apperr.Invalid, "metric avg needs a field")
	got, err := b.s.Update(ctx, b.owner, c.ID, widgets.Input{Name: str("Renamed")})
	if err != nil || got.Name != "Renamed" || got.GroupByField != "" || got.ChartType != "line" || got.DataSource != "messages" {
		t.Fatalf("update: %+v, %v", got, err)
	}
	stored, _ := b.s.Get(ctx, b.owner, c.ID)
	if stored.Name != "Renamed" || stored.GroupByField != "" {
		t.Fatalf("stored %+v", stored)
	}
	got, err = b.s.Update(ctx, b.owner, c.ID, widgets.Input{GroupByField: str("direction"), Metric: str("avg"), Field: str("delivery_seconds"),
		Filters: filters(widgets.FilterInput{"delivery_seconds", "gt", 1.5})})
	if err != nil || got.GroupByField != "direction" || got.Filters.V[0].Value != "1.5" || got.Name != "Renamed" {
		t.Fatalf("update: %+v, %v", got, err)
	}
}

// Owners change and delete their widgets; others in the organization see
// the shared ones but get 403 changing them, and 404 for private ones;
// another organization gets 404 for everything.
func TestOwnershipAndSharing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	private, err := b.s.Create(ctx, b.owner, number("messages"))
	if err != nil {
		t.Fatal(err)
	}
	in := number("contacts")
	in.IsShared = yes()
	shared, err := b.s.Create(ctx, b.owner, in)
	if err != nil || !shared.IsShared {
		t.Fatalf("shared: %+v, %v", shared, err)
	}
	mine, err := b.s.Create(ctx, b.agent, number("sessions"))
	if err != nil {
		t.Fatal(err)
	}
	ids := func(c widgets.Caller) []uuid.UUID {
		rows, err := b.s.List(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		var out []uuid.UUID
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(b.owner); len(got) != 2 {
		t.Fatalf("owner sees %v", got)
	}
	if got := ids(b.agent); len(got) != 2 || got[0] != shared.ID && got[1] != shared.ID {
		t.Fatalf("agent sees %v, want their own and the shared one", got)
	}
	if _, err := b.s.Get(ctx, b.agent, shared.ID); err != nil {
		t.Fatal(err)
	}
	_, err = b.s.Get(ctx, b.agent, private.ID)
	testfactory.WantError(t, err, apperr.NotFound, "Widget not found")
	_, err = b.s.Update(ctx, b.agent, private.ID, widgets.Input{Name: str("mine now")})
	testfactory.WantError(t, err, apperr.NotFound, "Widget not found")
	_, err = b.s.Update(ctx, b.other, shared.ID, widgets.Input{Name: str("mine now")})
	testfactory.WantError(t, err, apperr.Forbidden, "only the widget's owner")
	testfactory.WantError(t, b.s.Delete(ctx, b.other, shared.ID), apperr.Forbidden, "only the widget's owner")
	testfactory.WantError(t, b.s.Delete(ctx, b.agent, private.ID), apperr.NotFound, "Widget not found")
	// The agent may not share, but may keep its widget private.
	_, err = b.s.Update(ctx, b.agent, mine.ID, widgets.Input{IsShared: yes()})
	testfactory.WantError(t, err, apperr.Forbidden, "analytics:share")
	if _, err := b.s.Update(ctx, b.agent, mine.ID, widgets.Input{Name: str("Mine")}); err != nil {
		t.Fatal(err)
	}

	otherOrg := b.f.Org()
	stranger := widgets.Caller{OrgID: otherOrg.ID, UserID: b.f.User(otherOrg, identity.RoleAdmin).ID, CanShare: true}
	_, err = b.s.Get(ctx, stranger, shared.ID)
	testfactory.WantError(t, err, apperr.NotFound, "Widget not found")
	_, err = b.s.Update(ctx, stranger, shared.ID, widgets.Input{Name: str("x")})
	testfactory.WantError(t, err, apperr.NotFound, "Widget not found")
	testfactory.WantError(t, b.s.Delete(ctx, stranger, shared.ID), apperr.NotFound, "Widget not found")
	_, err = b.s.WidgetData(ctx, stranger, shared.ID, widgets.Period{})
	testfactory.WantError(t, err, apperr.NotFound, "Widget not found")
	if got := ids(stranger); len(got) != 0 {
		t.Fatalf("another organization sees %v", got)
	}

	if err := b.s.Delete(ctx, b.owner, shared.ID); err != nil {
		t.Fatal(err)
	}
	if n := b.f.Count("dashboard_widgets", "id = ?", shared.ID); n != 0 {
		t.Fatal("deleted widget still stored")
	}
}

// A layout moves every widget named or none: a widget of another user
// (shared or not) or of nobody refuses the whole layout.
func TestLayoutIsAllOrNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	var mine []models.DashboardWidget
	for range 3 {
		w, err := b.s.Create(ctx, b.owner, number("messages"))
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, *w)
	}
	in := number("messages")
	in.IsShared = yes()
	theirs, err := b.s.Create(ctx, b.other, in)
	if err != nil {
		t.Fatal(err)
	}
	privateTheirs, err := b.s.Create(ctx, b.other, number("messages"))
	if err != nil {
		t.Fatal(err)
	}
	place := func(ids ...uuid.UUID) []widgets.Placement {
		out := make([]widgets.Placement, len(ids))
		for i, id := range ids {
			out[i] = widgets.Placement{ID: id, GridX: i * 3, GridY: 7, GridW: 3, GridH: 2}
		}
		return out
	}
	unchanged := func() {
		t.Helper()
		if n := b.f.Count("dashboard_widgets", "grid_y = 7"); n != 0 {
			t.Fatalf("%d widgets moved by a refused layout", n)
		}
	}
	testfactory.WantError(t, b.s.Layout(ctx, b.owner, place(mine[2].ID, theirs.ID)), apperr.Forbidden, "only the widget's owner can move it")
	unchanged()
	testfactory.WantError(t, b.s.Layout(ctx, b.owner, place(mine[2].ID, privateTheirs.ID)), apperr.NotFound, "Widget not found")
	unchanged()
	testfactory.WantError(t, b.s.Layout(ctx, b.owner, place(mine[2].ID, uuid.New())), apperr.NotFound, "Widget not found")
	unchanged()
	testfactory.WantError(t, b.s.Layout(ctx, b.owner, place(mine[2].ID, mine[2].ID)), apperr.Invalid, "twice")
	testfactory.WantError(t, b.s.Layout(ctx, b.owner, nil), apperr.Invalid, "non-empty array")
	bad := place(mine[0].ID)
	bad[0].GridW = 0
	testfactory.WantError(t, b.s.Layout(ctx, b.owner, bad), apperr.Invalid, "grid_w and grid_h 1 to")
	unchanged()

	if err := b.s.Layout(ctx, b.owner, place(mine[2].ID, mine[0].ID, mine[1].ID)); err != nil {
		t.Fatal(err)
	}
	rows, _ := b.s.List(ctx, b.owner)
	var order []uuid.UUID
	for _, r := range rows {
		if r.CreatedBy == b.owner.UserID {
			order = append(order, r.ID)
			if r.GridY != 7 || r.GridW != 3 {
				t.Fatalf("not placed: %+v", r)
			}
		}
	}
	if len(order) != 3 || order[0] != mine[2].ID || order[1] != mine[0].ID || order[2] != mine[1].ID {
		t.Fatalf("order %v, want the layout's", order)
	}
}

// A user has at most 50 widgets in an organization: the 51st creation is a
// 409 and stores nothing, also when the creations race; another user, or a
// deletion, makes room.
func TestWidgetsPerUserAreBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	created := make(chan error, widgets.MaxPerUser+10)
	for range widgets.MaxPerUser + 10 { // at once: the bound holds under concurrency
		go func() {
			_, err := b.s.Create(ctx, b.owner, number("messages"))
			created <- err
		}()
	}
	var refused int
	for range widgets.MaxPerUser + 10 {
		err := <-created
		switch {
		case err == nil:
		case apperr.Is(err, apperr.Conflict) && err.Error() == "you have 50 widgets, the most a user may have; delete one first":
			refused++
		default:
			t.Fatalf("creation: %v", err)
		}
	}
	if n := b.f.Count("dashboard_widgets", "created_by = ?", b.owner.UserID); refused != 10 || n != widgets.MaxPerUser {
		t.Fatalf("%d refused, %d stored; want 10 and 50", refused, n)
	}
	var orders []int
	b.f.DB.Raw(`SELECT display_order FROM dashboard_widgets WHERE created_by = ? ORDER BY display_order`, b.owner.UserID).Scan(&orders)
	for i, o := range orders {
		if o != i {
			t.Fatalf("display orders %v: each creation must take its own place", orders)
		}
	}
	if _, err := b.s.Create(ctx, b.other, number("messages")); err != nil {
		t.Fatalf("another user: %v", err)
	}
	var first models.DashboardWidget
	b.f.DB.Take(&first, "created_by = ?", b.owner.UserID)
	if err := b.s.Delete(ctx, b.owner, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.Create(ctx, b.owner, number("messages")); err != nil {
		t.Fatalf("after a deletion: %v", err)
	}
}
