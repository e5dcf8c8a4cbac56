package customactions_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/contacts"
	"wharf/internal/customactions"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

type testBundle struct {
	s   *customactions.Service
	f   *testfactory.Factory
	org *testfactory.Org
}

// setup builds the service on a database and Redis of the test's own;
// policy is the outbound address rule (local test servers need
// AllowPrivate).
func setup(t *testing.T, policy safehttp.Policy) testBundle {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	s := customactions.NewService(customactions.Deps{DB: f.DB, Redis: testenv.Redis(t, testenv.RedisURL(t)),
		Contacts: contacts.NewService(f.DB, nil, nil, nil), Settings: orgsettings.NewService(f.DB, f.Box, nil, nil), Policy: policy,
		Log: testenv.Quiet()})
	return testBundle{s: s, f: f, org: f.Org()}
}

func str(s string) *string { return &s }

func webhookInput(name, url string) customactions.Input {
	return customactions.Input{Name: str(name), ActionType: str("webhook"), Config: map[string]any{"url": url}}
}

func TestCreateValidatesAndDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{})
	ctx := context.Background()
	for in, want := range map[*customactions.Input]string{
		{ActionType: str("url"), Config: map[string]any{"url": "https://x.example"}}:                              "name is required",
		{Name: str(" "), ActionType: str("url"), Config: map[string]any{"url": "https://x.example"}}:              "name is required",
		{Name: str("A"), Config: map[string]any{"url": "https://x.example"}}:                                      "action_type is required",
		{Name: str("A"), ActionType: str("url")}:                                                                  "config is required",
		{Name: str("A"), ActionType: str("sms"), Config: map[string]any{"url": "https://x.example"}}:              "action_type must be one of webhook, url, javascript",
		{Name: str("A"), Icon: str("rocket"), ActionType: str("url"), Config: map[string]any{"url": "https://x"}}: "icon must be one of ticket, user",
		{Name: str("A"), ActionType: str("url"), Config: map[string]any{"url": "javascript:alert(1)"}}:            "config.url must be an http or https URL",
		{Name: str("A"), ActionType: str("webhook"), Config: map[string]any{"url": "http://127.0.0.1/"}}:          "config.url: the address is not allowed",
	} {
		_, err := b.s.Create(ctx, b.org.ID, nil, *in)
		testfactory.WantError(t, err, apperr.Invalid, want)
	}
	if n := b.f.Count("custom_actions", "true"); n != 0 {
		t.Fatalf("%d rows stored by refused creations", n)
	}

	a, err := b.s.Create(ctx, b.org.ID, nil, webhookInput("Create ticket", "https://tickets.example/new"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Icon != "zap" || !a.IsActive || a.DisplayOrder != 0 || a.Config.V["method"] != "POST" || a.Config.V["body"] != "" {
		t.Fatalf("defaults: %+v", a)
	}
	_, err = b.s.Create(ctx, b.org.ID, nil, webhookInput("CREATE TICKET", "https://tickets.example/other"))
	testfactory.WantError(t, err, apperr.Conflict, "Custom action with this name already exists")
	// Names are unique per organization only.
	if _, err := b.s.Create(ctx, b.f.Org().ID, nil, webhookInput("Create ticket", "https://tickets.example/new")); err != nil {
		t.Fatal(err)
	}
}

func TestUpdateChecksTheMergedAction(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{})
	ctx := context.Background()
	a, err := b.s.Create(ctx, b.org.ID, nil, customactions.Input{Name: str("Open CRM"), Icon: str("link"), ActionType: str("url"),
		Config: map[string]any{"url": "https://crm.example/c/{{contact.id}}", "open_in_new_tab": false}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.s.Create(ctx, b.org.ID, nil, webhookInput("Ping", "https://ping.example/"))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[*customactions.Input]string{
		{Icon: str("rocket")}:                             "icon must be one of",
		{ActionType: str("sms")}:                          "action_type must be one of",
		{ActionType: str("javascript")}:                   "config.code is required for a javascript action", // the stored config, re-checked
		{Config: map[string]any{"url": "mailto:x@y.z"}}:   "config.url must be an http or https URL",
		{Name: str("")}:                                   "name is required",
		{Config: map[string]any{"open_in_new_tab": true}}: "config.url is required", // a given config replaces the stored one
	} {
		_, err := b.s.Update(ctx, b.org.ID, a.ID, *in)
		testfactory.WantError(t, err, apperr.Invalid, want)
	}
	_, err = b.s.Update(ctx, b.org.ID, a.ID, customactions.Input{Name: str("ping")})
	testfactory.WantError(t, err, apperr.Conflict, "Custom action with this name already exists")
	got, _ := b.s.Get(ctx, b.org.ID, a.ID)
	if got.Name != "Open CRM" || got.Icon != "link" || got.ActionType != "url" || got.Config.V["open_in_new_tab"] != false {
		t.Fatalf("refused updates changed the row: %+v", got)
	}

	// url -> webhook keeps the URL (a key both types have) and gains the
	// webhook's defaults; open_in_new_tab is dropped.
	up, err := b.s.Update(ctx, b.org.ID, a.ID, customactions.Input{ActionType: str("webhook"), DisplayOrder: new(int)})
	if err != nil {
		t.Fatal(err)
	}
	if up.Config.V["url"] != "https://crm.example/c/{{contact.id}}" || up.Config.V["method"] != "POST" || up.Config.V["open_in_new_tab"] != nil {
		t.Fatalf("type change: %+v", up.Config.V)
	}
	seven := 7
	up, err = b.s.Update(ctx, b.org.ID, other.ID, customactions.Input{ActionType: str("javascript"), Config: map[string]any{"code": "x()"},
		IsActive: new(bool), DisplayOrder: &seven})
	if err != nil || up.ActionType != "javascript" || up.IsActive || up.DisplayOrder != 7 {
		t.Fatalf("update: %+v %v", up, err)
	}
	var stored models.CustomAction
	b.f.DB.Take(&stored, "id = ?", other.ID)
	if stored.ActionType != "javascript" || stored.Config.V["code"] != "x()" || stored.IsActive || stored.DisplayOrder != 7 || !stored.UpdatedAt.After(stored.CreatedAt) {
		t.Fatalf("stored: %+v", stored)
	}
}

func TestListOrderAndTenancy(t *testing.T) {
	t.Parallel()
	b := setup(t, safehttp.Policy{})
	ctx := context.Background()
	mk := func(name string, order int) *models.CustomAction {
		in := customactions.Input{Name: str(name), ActionType: str("javascript"), Config: map[string]any{"code": "1"}, DisplayOrder: &order}
		a, err := b.s.Create(ctx, b.org.ID, nil, in)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	mk("beta", 1)
	mk("Alpha", 1)
	first := mk("zulu", 0)
	rows, err := b.s.List(ctx, b.org.ID)
	if err != nil || len(rows) != 3 || rows[0].Name != "zulu" || rows[1].Name != "Alpha" || rows[2].Name != "beta" {
		t.Fatalf("list: %+v %v", rows, err)
	}

	other := b.f.Org()
	if rows, _ := b.s.List(ctx, other.ID); len(rows) != 0 {
		t.Fatalf("other org lists %d", len(rows))
	}
	_, err = b.s.Get(ctx, other.ID, first.ID)
	testfactory.WantError(t, err, apperr.NotFound, "Custom action not found")
	_, err = b.s.Update(ctx, other.ID, first.ID, customactions.Input{Name: str("mine")})
	testfactory.WantError(t, err, apperr.NotFound, "Custom action not found")
	testfactory.WantError(t, b.s.Delete(ctx, other.ID, first.ID), apperr.NotFound, "Custom action not found")
	_, err = b.s.Execute(ctx, other.ID, first.ID, uuid.New(), customactions.Caller{})
	testfactory.WantError(t, err, apperr.NotFound, "Custom action not found")

	if err := b.s.Delete(ctx, b.org.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if n := b.f.Count("custom_actions", "id = ?", first.ID); n != 0 {
		t.Fatal("not deleted")
	}
	testfactory.WantError(t, b.s.Delete(ctx, b.org.ID, first.ID), apperr.NotFound, "Custom action not found")
}
