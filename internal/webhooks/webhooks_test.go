package webhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
)

func ptr[T any](v T) *T { return &v }

// newService builds the webhooks domain with a queue of the test's own;
// private addresses are allowed only when the test says so.
func newService(t *testing.T, f *testfactory.Factory, allowPrivate bool) (*webhooks.Service, *testenv.Queue) {
	q := testenv.NewQueue(t)
	return webhooks.NewService(f.DB, f.Box, q.Enqueuer, safehttp.Policy{AllowPrivate: allowPrivate}, nil, testenv.Quiet()), q
}

func TestConfiguration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f   *testfactory.Factory
		org *testfactory.Org
	}
	setup := func(t *testing.T) (*webhooks.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, _ := newService(t, f, false)
		return svc, &testBundle{f: f, org: f.Org()}
	}
	valid := func() webhooks.Input {
		return webhooks.Input{Name: ptr("CRM"), URL: ptr("https://crm.example.com/hook"), Events: &[]string{"contact.created"}}
	}

	t.Run("CreateValidatesEveryField", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		many := map[string]string{}
		for i := range 21 {
			many[fmt.Sprintf("X-H%d", i)] = "v"
		}
		for _, c := range []struct {
			edit func(*webhooks.Input)
			msg  string
		}{
			{func(in *webhooks.Input) { in.Events = nil }, "name, url and events are required"},
			{func(in *webhooks.Input) { in.Name = ptr(" ") }, "name is required (at most 100 characters)"},
			{func(in *webhooks.Input) { in.URL = ptr("ftp://crm.example.com") }, "url: scheme must be http or https"},
			{func(in *webhooks.Input) { in.URL = ptr("http://127.0.0.1:8080/hook") }, "url: "},
			{func(in *webhooks.Input) { in.URL = ptr("http://169.254.169.254/latest") }, "url: "},
			{func(in *webhooks.Input) { in.Events = &[]string{} }, "events must name at least one event"},
			{func(in *webhooks.Input) { in.Events = &[]string{"contact.created", "contact.deleted"} }, `unknown event "contact.deleted"`},
			{func(in *webhooks.Input) { in.Headers = &many }, "at most 20 custom headers"},
			{func(in *webhooks.Input) { in.Headers = &map[string]string{"Bad Header": "v"} }, `header "Bad Header" is not a valid HTTP header`},
			{func(in *webhooks.Input) { in.Headers = &map[string]string{"X-Ok": "a\r\nInjected: 1"} }, `header "X-Ok" is not a valid HTTP header`},
			{func(in *webhooks.Input) { in.Headers = &map[string]string{"x-webhook-signature": "forged"} }, "is set by the delivery and cannot be overridden"},
		} {
			in := valid()
			c.edit(&in)
			_, err := svc.Create(ctx, bundle.org.ID, in)
			testfactory.WantError(t, err, apperr.Invalid, c.msg)
		}
		if n := bundle.f.Count("webhooks", ""); n != 0 {
			t.Errorf("%d webhooks stored by refused creates", n)
		}
	})

	t.Run("TheSecretIsSealedNeverShownAndCanBeCleared", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		in := valid()
		in.Secret = ptr("s3cret")
		in.Events = &[]string{"contact.created", "contact.created", "message.incoming"}
		w, err := svc.Create(ctx, bundle.org.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if !w.HasSecret || !w.IsActive || fmt.Sprint(w.Events.V) != "[contact.created message.incoming]" {
			t.Errorf("created %+v: want active, with a secret, each event once", w)
		}
		if bundle.f.Count("webhooks", "position('s3cret' in encode(secret_enc, 'escape')) > 0") != 0 {
			t.Error("the secret is stored in clear")
		}
		w, err = svc.Update(ctx, bundle.org.ID, w.ID, webhooks.Input{Secret: ptr(""), IsActive: ptr(false)})
		if err != nil || w.HasSecret || w.IsActive || w.Name != "CRM" {
			t.Errorf("updated %+v, %v: want the secret cleared, inactive, the rest kept", w, err)
		}
	})

	t.Run("AnotherOrganizationsWebhookIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		theirs, err := svc.Create(ctx, bundle.f.Org().ID, valid())
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Get(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "webhook not found")
		_, err = svc.Update(ctx, bundle.org.ID, theirs.ID, webhooks.Input{Name: ptr("mine")})
		testfactory.WantError(t, err, apperr.NotFound, "webhook not found")
		_, err = svc.Deliveries(ctx, bundle.org.ID, theirs.ID, 10)
		testfactory.WantError(t, err, apperr.NotFound, "webhook not found")
		_, err = svc.Test(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "webhook not found")
		testfactory.WantError(t, svc.Delete(ctx, bundle.org.ID, theirs.ID), apperr.NotFound, "webhook not found")
		testfactory.WantError(t, svc.Delete(ctx, bundle.org.ID, uuid.New()), apperr.NotFound, "webhook not found")
		if list, _ := svc.List(ctx, bundle.org.ID); len(list) != 0 {
			t.Errorf("the organization lists %d webhooks of another", len(list))
		}
		if bundle.f.Count("webhooks", "name = 'CRM'") != 1 {
			t.Error("another organization's webhook changed")
		}
	})

	t.Run("TheCatalogListsOnlySubscribableEvents", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for _, e := range webhooks.Catalog {
			in := valid()
			in.Events = &[]string{e.Event}
			if _, err := svc.Create(ctx, bundle.org.ID, in); err != nil {
				t.Errorf("event %s of the catalog refused: %v", e.Event, err)
			}
			if strings.TrimSpace(e.Description) == "" {
				t.Errorf("event %s has no description", e.Event)
			}
		}
		in := valid()
		in.Events = &[]string{webhooks.EventTest}
		_, err := svc.Create(ctx, bundle.org.ID, in)
		testfactory.WantError(t, err, apperr.Invalid, `unknown event "test"`)
	})
}
