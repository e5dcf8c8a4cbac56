package pflows_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/orgsettings"
	"wharf/internal/pflows"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

func ptr[T any](v T) *T { return &v }

type testBundle struct {
	f        *testfactory.Factory
	provider *testfactory.Provider
	org      *testfactory.Org
	account  models.PlatformAccount
}

// setup builds the flows domain (and the accounts domain it reads
// credentials from) with the simulator as the provider.
func setup(t *testing.T) (*pflows.Service, *testBundle) {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	q := testenv.NewQueue(t)
	accts := accounts.NewService(f.DB, f.Box, p.Client, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	org := f.Org()
	return pflows.NewService(f.DB, accts, p.Client), &testBundle{f: f, provider: p, org: org, account: f.AccountAt(p, org.ID)}
}

func (b *testBundle) creds() platform.Creds {
	return platform.Creds{AccessToken: testfactory.Token, BusinessAccountID: b.account.BusinessAccountID}
}

// calls counts the requests the provider got whose path contains path.
func (b *testBundle) calls(method, path string) int {
	return b.provider.Sim.CountRequests(platformsim.RequestFilter{Method: method, Path: path})
}

// validDefinition is a one-screen flow the provider accepts.
func validDefinition() map[string]any {
	return map[string]any{"version": "6.0", "screens": []any{map[string]any{"id": "WELCOME", "title": "Welcome",
		"layout": map[string]any{"type": "SingleColumnLayout", "children": []any{
			map[string]any{"type": "TextHeading", "text": "Hello"},
			map[string]any{"type": "Footer", "label": "Done", "on-click-action": map[string]any{"name": "complete", "payload": map[string]any{}}},
		}}}}}
}

func (b *testBundle) input() pflows.Input {
	return pflows.Input{AccountID: &b.account.ID, Name: ptr("Sign up"), Categories: &[]string{"sign_up"}, JSONDefinition: validDefinition()}
}

func TestCreateValidates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	for _, c := range []struct {
		edit func(*pflows.Input)
		kind apperr.Kind
		msg  string
	}{
		{func(in *pflows.Input) { in.AccountID = nil }, apperr.Invalid, "account_id is required"},
		{func(in *pflows.Input) { in.Name = nil }, apperr.Invalid, "name is required"},
		{func(in *pflows.Input) { in.Name = ptr("  ") }, apperr.Invalid, "name is required"},
		{func(in *pflows.Input) { in.Categories = nil }, apperr.Invalid, "categories are required"},
		{func(in *pflows.Input) { in.Categories = &[]string{} }, apperr.Invalid, "categories are required"},
		{func(in *pflows.Input) { in.Categories = &[]string{"PROMO"} }, apperr.Invalid, "categories must be one or more of SIGN_UP"},
		{func(in *pflows.Input) { in.AccountID = ptr(uuid.New()) }, apperr.NotFound, "account not found"},
		{func(in *pflows.Input) { other := b.f.Account(b.f.Org().ID); in.AccountID = &other.ID }, apperr.NotFound, "account not found"},
	} {
		in := b.input()
		c.edit(&in)
		_, err := s.Create(ctx, b.org.ID, in)
		testfactory.WantError(t, err, c.kind, c.msg)
	}
	if n := b.f.Count("platform_flows", "true"); n != 0 {
		t.Fatalf("%d flows stored by refused creates", n)
	}
	f, err := s.Create(ctx, b.org.ID, b.input())
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != models.FlowDraft || f.ProviderFlowID != nil || !f.NeedsSave || f.Categories.V[0] != "SIGN_UP" ||
		f.JSONDefinition.V["version"] != "6.0" || len(f.ValidationErrors.V) != 0 {
		t.Fatalf("created %+v", f)
	}
	if n := b.calls("", "/flows"); n != 0 {
		t.Fatalf("create reached the provider %d times", n)
	}
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	other := b.f.AccountAt(b.provider, b.org.ID, func(a *models.PlatformAccount) { a.PhoneNumberID = "999001" })
	for range 3 {
		if _, err := s.Create(ctx, b.org.ID, b.input()); err != nil {
			t.Fatal(err)
		}
	}
	in := b.input()
	in.AccountID = &other.ID
	second, err := s.Create(ctx, b.org.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	b.f.DB.Model(second).Update("status", models.FlowPublished)
	if _, err := s.Create(ctx, b.f.Org().ID, pflows.Input{AccountID: ptr(b.f.Account(b.f.Org().ID).ID), Name: ptr("x"), Categories: &[]string{"OTHER"}}); err == nil {
		t.Fatal("created for another organization's account")
	}
	rows, total, err := s.List(ctx, b.org.ID, pflows.Filter{}, paging.Params{Page: 1, Limit: 2})
	if err != nil || total != 4 || len(rows) != 2 {
		t.Fatalf("page: %d rows of %d, %v", len(rows), total, err)
	}
	rows, total, _ = s.List(ctx, b.org.ID, pflows.Filter{Status: "published"}, paging.Params{Page: 1, Limit: 20})
	if total != 1 || rows[0].ID != second.ID {
		t.Fatalf("status filter: %d", total)
	}
	_, total, _ = s.List(ctx, b.org.ID, pflows.Filter{AccountID: &b.account.ID}, paging.Params{Page: 1, Limit: 20})
	if total != 3 {
		t.Fatalf("account filter: %d", total)
	}
	_, _, err = s.List(ctx, b.org.ID, pflows.Filter{Status: "LIVE"}, paging.Params{Page: 1, Limit: 20})
	testfactory.WantError(t, err, apperr.Invalid, "status must be one of DRAFT, PUBLISHED, DEPRECATED")
}

// The whole life of a flow: saved with errors (it stays DRAFT, the errors
// are answered, publishing is refused here), fixed, saved again to the same
// provider flow, published, deprecated. Every refusal of a wrong state is
// decided here and never reaches the provider.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	in := b.input()
	in.JSONDefinition = map[string]any{"version": "6.0"} // no screens: the provider says so
	f, err := s.Create(ctx, b.org.ID, in)
	if err != nil {
		t.Fatal(err)
	}

	_, err = s.Publish(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Invalid, "never saved to the provider")

	saved, err := s.SaveToProvider(ctx, b.org.ID, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if saved.ProviderFlowID == "" || len(saved.ValidationErrors) == 0 || saved.ValidationErrors[0].Error != "MISSING_REQUIRED_PROPERTY" ||
		saved.Flow.Status != models.FlowDraft || saved.Flow.NeedsSave || len(saved.Flow.ValidationErrors.V) != len(saved.ValidationErrors) {
		t.Fatalf("save with errors: %+v", saved)
	}
	pf, err := b.provider.Client.GetFlow(ctx, b.creds(), saved.ProviderFlowID)
	if err != nil || pf.Name != "Sign up" || pf.Status != "DRAFT" || len(pf.Categories) != 1 || pf.Categories[0] != "SIGN_UP" {
		t.Fatalf("at the provider: %+v, %v", pf, err)
	}
	_, err = s.Publish(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Invalid, "validation errors")

	// Fixed here: publishing is refused until it is saved again.
	if _, err := s.Update(ctx, b.org.ID, f.ID, pflows.Input{Name: ptr("Sign-up form"), JSONDefinition: validDefinition()}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Publish(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Invalid, "changed since it was saved")
	if n := b.calls("POST", "/publish"); n != 0 {
		t.Fatalf("%d publish requests reached the provider before the flow could be published", n)
	}
	again, err := s.SaveToProvider(ctx, b.org.ID, f.ID)
	if err != nil || again.ProviderFlowID != saved.ProviderFlowID || len(again.ValidationErrors) != 0 || len(again.Flow.ValidationErrors.V) != 0 {
		t.Fatalf("second save: %+v, %v", again, err)
	}
	if n := b.calls("POST", b.account.BusinessAccountID+"/flows"); n != 1 {
		t.Fatalf("the flow was created %d times at the provider", n)
	}
	if pf, _ := b.provider.Client.GetFlow(ctx, b.creds(), saved.ProviderFlowID); pf.Name != "Sign-up form" {
		t.Fatalf("the provider's name was not updated: %+v", pf)
	}

	published, err := s.Publish(ctx, b.org.ID, f.ID)
	if err != nil || published.Status != models.FlowPublished {
		t.Fatalf("publish: %+v, %v", published, err)
	}
	if pf, _ := b.provider.Client.GetFlow(ctx, b.creds(), saved.ProviderFlowID); pf.Status != "PUBLISHED" {
		t.Fatalf("at the provider after publish: %+v", pf)
	}

	// A published flow is not changed, saved, published again or deleted.
	publishes := b.calls("POST", "/publish")
	_, err = s.Update(ctx, b.org.ID, f.ID, pflows.Input{Name: ptr("x")})
	testfactory.WantError(t, err, apperr.Conflict, "only DRAFT flows can be changed; this one is PUBLISHED")
	_, err = s.SaveToProvider(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "only DRAFT flows can be saved")
	_, err = s.Publish(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "only DRAFT flows can be published; this one is PUBLISHED")
	err = s.Delete(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "deprecate it first")

	deprecated, err := s.Deprecate(ctx, b.org.ID, f.ID)
	if err != nil || deprecated.Status != models.FlowDeprecated {
		t.Fatalf("deprecate: %+v, %v", deprecated, err)
	}
	deprecations := b.calls("POST", "/deprecate")
	// DEPRECATED is final.
	_, err = s.Deprecate(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "only PUBLISHED flows can be deprecated; this one is DEPRECATED")
	_, err = s.Publish(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "only DRAFT flows can be published; this one is DEPRECATED")
	if b.calls("POST", "/publish") != publishes || b.calls("POST", "/deprecate") != deprecations || deprecations != 1 {
		t.Fatal("a refused transition reached the provider")
	}
	// A deprecated flow is deleted here only (the provider deletes drafts only).
	if err := s.Delete(ctx, b.org.ID, f.ID); err != nil {
		t.Fatal(err)
	}
	if n := b.calls("DELETE", ""); n != 0 {
		t.Fatalf("%d deletes reached the provider", n)
	}
}

func TestDeprecateADraftIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	f, _ := s.Create(ctx, b.org.ID, b.input())
	_, err := s.Deprecate(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "only PUBLISHED flows can be deprecated; this one is DRAFT")
	if _, err := s.SaveToProvider(ctx, b.org.ID, f.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Deprecate(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "this one is DRAFT")
	if n := b.calls("POST", "/deprecate"); n != 0 {
		t.Fatalf("%d deprecations reached the provider", n)
	}
}

// Saves of one flow at once create it once at the provider: the row lock
// is held across the provider's create.
func TestConcurrentSavesCreateOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	f, _ := s.Create(ctx, b.org.ID, b.input())
	var wg sync.WaitGroup
	ids := make([]string, 6)
	for i := range ids {
		wg.Go(func() {
			saved, err := s.SaveToProvider(ctx, b.org.ID, f.ID)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = saved.ProviderFlowID
		})
	}
	wg.Wait()
	if n := b.calls("POST", b.account.BusinessAccountID+"/flows"); n != 1 {
		t.Fatalf("created %d times at the provider", n)
	}
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("provider ids %v", ids)
		}
	}
}

// failAssets fails every flow JSON upload as a provider outage would.
type failAssets struct{}

func (failAssets) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/assets") {
		return nil, errors.New("connection reset")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A failed upload keeps the provider id of the flow just created, so that
// the retry uploads to it instead of creating another.
func TestFailedUploadKeepsTheProviderFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, b := setup(t)
	q := testenv.NewQueue(t)
	failing := platform.New(b.provider.URL, "", &http.Client{Transport: failAssets{}})
	accts := accounts.NewService(b.f.DB, b.f.Box, failing, orgsettings.NewService(b.f.DB, b.f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	s := pflows.NewService(b.f.DB, accts, failing)
	f, _ := s.Create(ctx, b.org.ID, b.input())
	_, err := s.SaveToProvider(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Upstream, "uploading the flow JSON")
	row, _ := s.Get(ctx, b.org.ID, f.ID)
	if row.ProviderFlowID == nil || !row.NeedsSave || row.SavedAt != nil {
		t.Fatalf("after the failed upload: %+v", row)
	}
	_, err = s.SaveToProvider(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Upstream, "uploading the flow JSON")
	if n := b.calls("POST", b.account.BusinessAccountID+"/flows"); n != 1 {
		t.Fatalf("created %d times at the provider", n)
	}
}

func TestDeleteDraft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	f, _ := s.Create(ctx, b.org.ID, b.input())
	saved, err := s.SaveToProvider(ctx, b.org.ID, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, b.org.ID, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.provider.Client.GetFlow(ctx, b.creds(), saved.ProviderFlowID); err == nil {
		t.Fatal("the draft is still at the provider")
	}
	_, err = s.Get(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.NotFound, "flow not found")
	// A never-saved draft is deleted here only.
	g, _ := s.Create(ctx, b.org.ID, b.input())
	if err := s.Delete(ctx, b.org.ID, g.ID); err != nil {
		t.Fatal(err)
	}
}

// Another organization's flow is not found, whatever the operation.
func TestTenancy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	f, _ := s.Create(ctx, b.org.ID, b.input())
	other := b.f.Org().ID
	_, err := s.Get(ctx, other, f.ID)
	testfactory.WantError(t, err, apperr.NotFound, "flow not found")
	_, err = s.Update(ctx, other, f.ID, pflows.Input{Name: ptr("x")})
	testfactory.WantError(t, err, apperr.NotFound, "flow not found")
	_, err = s.SaveToProvider(ctx, other, f.ID)
	testfactory.WantError(t, err, apperr.NotFound, "flow not found")
	_, err = s.Publish(ctx, other, f.ID)
	testfactory.WantError(t, err, apperr.NotFound, "flow not found")
	_, err = s.Deprecate(ctx, other, f.ID)
	testfactory.WantError(t, err, apperr.NotFound, "flow not found")
	testfactory.WantError(t, s.Delete(ctx, other, f.ID), apperr.NotFound, "flow not found")
	_, err = s.Sync(ctx, other, b.account.ID)
	testfactory.WantError(t, err, apperr.NotFound, "account not found")
	_, err = s.Sendable(ctx, other, f.ID)
	testfactory.WantError(t, err, apperr.NotFound, "flow not found")
	if _, total, _ := s.List(ctx, other, pflows.Filter{}, paging.Params{Page: 1, Limit: 20}); total != 0 {
		t.Fatalf("another organization lists %d flows", total)
	}
}

// Sync matches the provider's flows by provider id: flows made elsewhere
// arrive with their JSON, changed ones are updated, the rest counted only.
func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	cr := b.creds()
	// One flow made here and saved; one made at the provider directly and published.
	mine, _ := s.Create(ctx, b.org.ID, b.input())
	if _, err := s.SaveToProvider(ctx, b.org.ID, mine.ID); err != nil {
		t.Fatal(err)
	}
	theirs, err := b.provider.Client.CreateFlow(ctx, cr, "Survey", []string{"SURVEY"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.provider.Client.UploadFlowJSON(ctx, cr, theirs, []byte(`{"version":"6.0","screens":[{"id":"Q1","title":"Q","layout":{"type":"SingleColumnLayout","children":[]}}]}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.provider.Client.PublishFlow(ctx, cr, theirs); err != nil {
		t.Fatal(err)
	}

	res, err := s.Sync(ctx, b.org.ID, b.account.ID)
	if err != nil || *res != (pflows.SyncResult{Synced: 2, New: 1, Updated: 0}) {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	rows, _, _ := s.List(ctx, b.org.ID, pflows.Filter{Status: "PUBLISHED"}, paging.Params{Page: 1, Limit: 20})
	if len(rows) != 1 || *rows[0].ProviderFlowID != theirs || rows[0].Name != "Survey" || rows[0].NeedsSave ||
		rows[0].Categories.V[0] != "SURVEY" || rows[0].JSONDefinition.V["version"] != "6.0" {
		t.Fatalf("imported: %+v", rows)
	}

	// Nothing changed: nothing updated.
	if res, _ := s.Sync(ctx, b.org.ID, b.account.ID); *res != (pflows.SyncResult{Synced: 2}) {
		t.Fatalf("idle sync: %+v", res)
	}

	// The provider blocks one and renames the other.
	if err := b.provider.Sim.SetFlowStatus(theirs, "BLOCKED"); err != nil {
		t.Fatal(err)
	}
	mineRow, _ := s.Get(ctx, b.org.ID, mine.ID)
	if err := b.provider.Client.UpdateFlow(ctx, cr, *mineRow.ProviderFlowID, "Renamed there", []string{"OTHER"}); err != nil {
		t.Fatal(err)
	}
	res, _ = s.Sync(ctx, b.org.ID, b.account.ID)
	if *res != (pflows.SyncResult{Synced: 2, Updated: 2}) {
		t.Fatalf("sync after changes: %+v", res)
	}
	mineRow, _ = s.Get(ctx, b.org.ID, mine.ID)
	if mineRow.Name != "Renamed there" || mineRow.Categories.V[0] != "OTHER" {
		t.Fatalf("rename not synced: %+v", mineRow)
	}
	if _, total, _ := s.List(ctx, b.org.ID, pflows.Filter{Status: "BLOCKED"}, paging.Params{Page: 1, Limit: 20}); total != 1 {
		t.Fatal("the block was not synced")
	}

	// Changes here not yet saved keep their name; the status still follows the provider.
	if _, err := s.Update(ctx, b.org.ID, mine.ID, pflows.Input{Name: ptr("Edited here")}); err != nil {
		t.Fatal(err)
	}
	_ = b.provider.Client.UpdateFlow(ctx, cr, *mineRow.ProviderFlowID, "Renamed again", nil)
	if res, _ := s.Sync(ctx, b.org.ID, b.account.ID); res.Updated != 0 {
		t.Fatalf("an unsaved edit was overwritten: %+v", res)
	}
	if row, _ := s.Get(ctx, b.org.ID, mine.ID); row.Name != "Edited here" {
		t.Fatalf("name %q", row.Name)
	}
}

// Only a published flow is sendable.
func TestSendable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	f, _ := s.Create(ctx, b.org.ID, b.input())
	_, err := s.Sendable(ctx, b.org.ID, f.ID)
	testfactory.WantError(t, err, apperr.Conflict, "only PUBLISHED flows can be sent; this one is DRAFT")
	if _, err := s.SaveToProvider(ctx, b.org.ID, f.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, b.org.ID, f.ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sendable(ctx, b.org.ID, f.ID)
	if err != nil || got.ID != f.ID {
		t.Fatalf("sendable: %+v, %v", got, err)
	}
	if waba, err := s.BusinessAccountID(ctx, got); err != nil || waba != b.account.BusinessAccountID {
		t.Fatalf("business account %q, %v", waba, err)
	}
	if screen := pflows.FirstScreen(got); screen != "WELCOME" {
		t.Fatalf("first screen %q", screen)
	}
	if screen := pflows.FirstScreen(&models.PlatformFlow{}); screen != "" {
		t.Fatalf("first screen of an empty definition %q", screen)
	}
}
