package templates_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/orgsettings"
	"wharf/internal/templates"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

func ptr[T any](v T) *T { return &v }

// newService builds the templates domain (and the accounts domain it reads
// credentials from) on the factory's database, with the simulator as the
// provider. It enqueues nothing the tests read.
func newService(t *testing.T, f *testfactory.Factory, p *testfactory.Provider) *templates.Service {
	q := testenv.NewQueue(t)
	accts := accounts.NewService(f.DB, f.Box, p.Client, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	return templates.NewService(f.DB, accts, p.Client, q.Enqueuer, testenv.Quiet())
}

func body(text string) []map[string]any { return []map[string]any{{"type": "BODY", "text": text}} }

func TestManage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		provider *testfactory.Provider
		org      *testfactory.Org
		account  models.PlatformAccount
	}
	setup := func(t *testing.T) (*templates.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		org := f.Org()
		return newService(t, f, p), &testBundle{f: f, provider: p, org: org, account: f.AccountAt(p, org.ID)}
	}
	submissions := func(bundle *testBundle) int {
		return bundle.provider.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: "/message_templates"})
	}
	input := func(bundle *testBundle) templates.Input {
		return templates.Input{AccountID: &bundle.account.ID, Name: "order_update", Language: "en_US", Category: "utility",
			Components:   body("Hi {{1}}, order {{2}} shipped"),
			SampleValues: []templates.SampleValue{{Component: "BODY", Index: ptr(1), Value: "Ada"}, {Component: "BODY", Index: ptr(2), Value: "A-1"}}}
	}

	t.Run("InvalidTemplatesAreNeitherSubmittedNorStored", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for _, c := range []struct {
			edit func(*templates.Input)
			msg  string
		}{
			{func(in *templates.Input) { in.AccountID = nil }, "account_id is required"},
			{func(in *templates.Input) { in.Name = "Order Update" }, "name must be lowercase letters, digits and underscores"},
			{func(in *templates.Input) { in.Language = "english" }, "language must be a language code"},
			{func(in *templates.Input) { in.Category = "PROMO" }, "category must be one of MARKETING, UTILITY, AUTHENTICATION"},
			{func(in *templates.Input) { in.ParameterFormat = "mixed" }, "parameter_format must be named or positional"},
			{func(in *templates.Input) { in.Components = nil }, "components are required"},
			{func(in *templates.Input) { in.Components = []map[string]any{{"type": "FOOTER", "text": "bye"}} }, "a BODY component is required"},
			{func(in *templates.Input) { in.Components = append(body("a"), body("b")...) }, "component BODY appears twice"},
			{func(in *templates.Input) { in.Components = body("Hi {{1}} and {{3}}") }, "BODY placeholders must be numbered {{1}} to {{2}} in order"},
			{func(in *templates.Input) { in.Components = body("Hi {{01}} and {{2}}") }, "BODY placeholders must be numbered {{1}} to {{2}} in order"},
			{func(in *templates.Input) { in.Components = body("Hi {{name}}") }, "positional templates take {{1}}, {{2}}"},
			{func(in *templates.Input) { in.ParameterFormat = "named" }, "named templates take {{name}} placeholders"},
			{func(in *templates.Input) { in.SampleValues = in.SampleValues[:1] }, "sample values are required for: BODY {{2}}"},
			{func(in *templates.Input) { in.Components = body(strings.Repeat("x", 1025)) }, "BODY text is required (at most 1024 characters)"},
			{func(in *templates.Input) {
				in.Components = append(in.Components, map[string]any{"type": "HEADER", "text": "{{1}} {{2}}"})
			}, "HEADER text can have at most one placeholder"},
			{func(in *templates.Input) {
				in.Components = append(in.Components, map[string]any{"type": "FOOTER", "text": "bye {{1}}"})
			}, "FOOTER text cannot have placeholders"},
			{func(in *templates.Input) {
				in.Components = append(in.Components, map[string]any{"type": "BUTTONS", "buttons": []any{
					map[string]any{"type": "URL", "text": "Track", "url": "https://x.test/{{1}}/track"}}})
			}, "button 0: url can have one placeholder, at its end"},
		} {
			in := input(bundle)
			c.edit(&in)
			_, err := svc.Create(ctx, bundle.org.ID, in)
			testfactory.WantError(t, err, apperr.Invalid, c.msg)
		}
		if n := submissions(bundle); n != 0 {
			t.Errorf("%d invalid templates submitted to the provider", n)
		}
		if n := bundle.f.Count("templates", ""); n != 0 {
			t.Errorf("%d invalid templates stored", n)
		}
	})

	t.Run("CreateSubmitsAndStoresThePendingTemplateOnce", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		tmpl, err := svc.Create(ctx, bundle.org.ID, input(bundle))
		if err != nil {
			t.Fatal(err)
		}
		if tmpl.Status != models.TemplatePending || tmpl.ProviderTemplateID == "" || tmpl.Category != "UTILITY" || submissions(bundle) != 1 {
			t.Errorf("created %+v after %d submissions: want one, PENDING with the provider's id", tmpl, submissions(bundle))
		}
		// The provider gets the sample values as its examples.
		reqs := bundle.provider.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/message_templates"})
		if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"body_text":[["Ada","A-1"]]`) {
			t.Errorf("submitted %s", reqs[0].Body)
		}
		_, err = svc.Create(ctx, bundle.org.ID, input(bundle))
		testfactory.WantError(t, err, apperr.Conflict, "the account already has a template order_update in en_US")
		if submissions(bundle) != 1 {
			t.Error("a duplicate was submitted")
		}
		in := input(bundle)
		in.Language = "fr"
		if _, err := svc.Create(ctx, bundle.org.ID, in); err != nil {
			t.Errorf("the same name in another language: %v", err)
		}
	})

	t.Run("TheAccountMustBeTheOrganizations", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		theirs := bundle.f.Account(bundle.f.Org().ID)
		in := input(bundle)
		in.AccountID = &theirs.ID
		_, err := svc.Create(ctx, bundle.org.ID, in)
		testfactory.WantError(t, err, apperr.Invalid, "account_id does not name an account of this organization")
		_, err = svc.Sync(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "account not found")
	})

	t.Run("AnApprovedTemplateCannotChange", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		tmpl := bundle.f.Template(bundle.account, "Hello")
		_, err := svc.Update(ctx, bundle.org.ID, tmpl.ID, body("Bye"), nil)
		testfactory.WantError(t, err, apperr.Conflict, "an APPROVED template cannot be edited")
		_, err = svc.Publish(ctx, bundle.org.ID, tmpl.ID)
		testfactory.WantError(t, err, apperr.Conflict, "the template is already APPROVED")
		rejected := bundle.f.Template(bundle.account, "Hello {{1}}", func(t *models.Template) { t.Status, t.ProviderTemplateID = models.TemplateRejected, "" })
		_, err = svc.Update(ctx, bundle.org.ID, rejected.ID, body("Hello {{1}}"), nil)
		testfactory.WantError(t, err, apperr.Invalid, "sample values are required for: BODY {{1}}")
		got, err := svc.Update(ctx, bundle.org.ID, rejected.ID, body("Hello {{1}}!"),
			&[]templates.SampleValue{{Component: "BODY", Index: ptr(1), Value: "Ada"}})
		if err != nil || got.Components.V[0]["text"] != "Hello {{1}}!" || got.Status != models.TemplateRejected {
			t.Fatalf("update of a rejected template: %+v, %v", got, err)
		}
		if got, err = svc.Publish(ctx, bundle.org.ID, rejected.ID); err != nil || got.Status != models.TemplatePending || got.ProviderTemplateID == "" {
			t.Fatalf("publish: %+v, %v; want it submitted and PENDING", got, err)
		}
	})

	t.Run("AnotherOrganizationsTemplateIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		other := bundle.f.Org()
		theirs := bundle.f.Template(bundle.f.Account(other.ID), "Hi", func(t *models.Template) { t.Status = models.TemplatePending })
		_, err := svc.Get(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "template not found")
		_, err = svc.Update(ctx, bundle.org.ID, theirs.ID, body("x"), nil)
		testfactory.WantError(t, err, apperr.NotFound, "template not found")
		_, err = svc.Publish(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "template not found")
		testfactory.WantError(t, svc.Delete(ctx, bundle.org.ID, theirs.ID), apperr.NotFound, "template not found")
		list, total, err := svc.List(ctx, bundle.org.ID, templates.Filter{}, paging.Params{Page: 1, Limit: 50})
		if err != nil || total != 0 || len(list) != 0 {
			t.Errorf("list: %d of %d, %v", len(list), total, err)
		}
		if bundle.f.Count("templates", "id = ?", theirs.ID) != 1 {
			t.Error("another organization's template was deleted")
		}
	})

	t.Run("SyncMirrorsTheProvidersTemplates", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		creds := platform.Creds{AccessToken: testfactory.Token, BusinessAccountID: bundle.provider.WABA.ID}
		comps, _ := json.Marshal(body("Hello"))
		var ids []string
		for _, name := range []string{"welcome", "goodbye"} {
			created, err := bundle.provider.Client.CreateTemplate(ctx, creds, platform.TemplateDefinition{Name: name, Language: "en",
				Category: "UTILITY", ParameterFormat: "POSITIONAL", Components: comps})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, created.ID)
		}
		res, err := svc.Sync(ctx, bundle.org.ID, bundle.account.ID)
		if err != nil || *res != (templates.SyncResult{Synced: 2, New: 2}) {
			t.Fatalf("first sync %+v, %v", res, err)
		}
		if res, _ = svc.Sync(ctx, bundle.org.ID, bundle.account.ID); *res != (templates.SyncResult{Synced: 2}) {
			t.Errorf("second sync %+v: want nothing new or changed", res)
		}
		// The review's webhook goes nowhere (no webhook URL): only the sync
		// can learn of it.
		_, _ = bundle.provider.Sim.SetTemplateStatus(ctx, ids[0], "REJECTED", "INVALID_FORMAT")
		if res, _ = svc.Sync(ctx, bundle.org.ID, bundle.account.ID); *res != (templates.SyncResult{Synced: 2, Updated: 1}) {
			t.Errorf("sync after a review %+v: want one updated", res)
		}
		if bundle.f.Count("templates", "name = 'welcome' AND status = 'REJECTED' AND rejected_reason = 'INVALID_FORMAT'") != 1 {
			t.Error("the review did not reach the stored template")
		}
		if bundle.f.Count("templates", "organization_id = ? AND account_id = ?", bundle.org.ID, bundle.account.ID) != 2 {
			t.Error("want the templates stored for the account's organization")
		}
	})
}
