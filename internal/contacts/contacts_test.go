package contacts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/contacts"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/safehttp"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/models"
)

func ptr[T any](v T) *T { return &v }

// newService builds the contacts domain with the webhooks domain it
// announces new contacts through, enqueuing on a queue of the test's own.
func newService(t *testing.T, f *testfactory.Factory) (*contacts.Service, *testenv.Queue) {
	q := testenv.NewQueue(t)
	wh := webhooks.NewService(f.DB, f.Box, q.Enqueuer, safehttp.Policy{AllowPrivate: true}, nil, testenv.Quiet())
	return contacts.NewService(f.DB, wh, nil, identity.NewService(f.DB, nil, nil, testenv.Quiet())), q
}

func TestContacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f   *testfactory.Factory
		org *testfactory.Org
	}
	setup := func(t *testing.T) (*contacts.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, _ := newService(t, f)
		return svc, &testBundle{f: f, org: f.Org()}
	}

	t.Run("CreateNormalizesTheNumberAndValidates", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c, err := svc.Create(ctx, bundle.org.ID, contacts.Input{PhoneNumber: ptr("+1 (555) 010-2000"), Name: ptr("  Ada  ")})
		if err != nil {
			t.Fatal(err)
		}
		if c.PhoneNumber != "+15550102000" || c.Name != "Ada" || c.Tags == nil || c.Metadata.V == nil {
			t.Errorf("created %+v: want the E.164 number, the trimmed name, no tags and empty metadata", c)
		}
		_, err = svc.Create(ctx, bundle.org.ID, contacts.Input{PhoneNumber: ptr("15550102000")})
		testfactory.WantError(t, err, apperr.Conflict, "a contact with this phone number already exists")

		theirAccount := bundle.f.Account(bundle.f.Org().ID)
		for _, c := range []struct {
			in  contacts.Input
			msg string
		}{
			{contacts.Input{}, "phone_number is required"},
			{contacts.Input{PhoneNumber: ptr("12")}, "phone_number: "},
			{contacts.Input{PhoneNumber: ptr("+15550102001"), Name: ptr(strings.Repeat("x", 201))}, "name must be at most 200 characters"},
			{contacts.Input{PhoneNumber: ptr("+15550102001"), AccountID: &theirAccount.ID}, "account_id does not name an account of this organization"},
			{contacts.Input{PhoneNumber: ptr("+15550102001"), Metadata: &map[string]any{"big": strings.Repeat("x", 65<<10)}}, "at most 64 KB"},
		} {
			_, err := svc.Create(ctx, bundle.org.ID, c.in)
			testfactory.WantError(t, err, apperr.Invalid, c.msg)
		}
		if n := bundle.f.Count("contacts", ""); n != 1 {
			t.Errorf("%d contacts stored, want only the valid one", n)
		}
	})

	t.Run("TheSameNumberMayBeAContactOfEachOrganization", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for _, org := range []uuid.UUID{bundle.org.ID, bundle.f.Org().ID} {
			if _, err := svc.Create(ctx, org, contacts.Input{PhoneNumber: ptr("+15550102000")}); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("AnotherOrganizationsContactIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		theirs := bundle.f.Contact(bundle.f.Org().ID, nil)
		member := bundle.f.User(bundle.org, identity.RoleAgent)
		_, err := svc.Get(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "contact not found")
		_, err = svc.Update(ctx, bundle.org.ID, theirs.ID, contacts.Input{Name: ptr("mine")})
		testfactory.WantError(t, err, apperr.NotFound, "contact not found")
		_, err = svc.Assign(ctx, bundle.org.ID, theirs.ID, &member.ID)
		testfactory.WantError(t, err, apperr.NotFound, "contact not found")
		_, err = svc.SetTags(ctx, bundle.org.ID, theirs.ID, []string{"vip"})
		testfactory.WantError(t, err, apperr.NotFound, "contact not found")
		_, err = svc.SessionData(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "contact not found")
		testfactory.WantError(t, svc.Delete(ctx, bundle.org.ID, theirs.ID), apperr.NotFound, "contact not found")
		list, total, err := svc.List(ctx, bundle.org.ID, contacts.Filter{Viewer: contacts.EveryContact}, paging.Params{Page: 1, Limit: 50})
		if err != nil || total.N != 0 || len(list) != 0 {
			t.Errorf("list: %d of %d, %v; want another organization's contacts hidden", len(list), total.N, err)
		}
		if bundle.f.Count("contacts", "id = ? AND name = ?", theirs.ID, theirs.Name) != 1 || bundle.f.Count("tags", "") != 0 {
			t.Error("another organization's contact was changed")
		}
	})

	t.Run("UpdateKeepsTheNumber", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := bundle.f.Contact(bundle.org.ID, nil)
		_, err := svc.Update(ctx, bundle.org.ID, c.ID, contacts.Input{PhoneNumber: ptr("+15550109999")})
		testfactory.WantError(t, err, apperr.Invalid, "phone_number cannot change")
		got, err := svc.Update(ctx, bundle.org.ID, c.ID, contacts.Input{Metadata: &map[string]any{"plan": "gold"}})
		if err != nil || got.Name != c.Name || got.Metadata.V["plan"] != "gold" {
			t.Errorf("update of the metadata: %+v, %v; want the name kept", got, err)
		}
	})

	t.Run("AssignOnlyToAMemberOfTheOrganization", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		c := bundle.f.Contact(bundle.org.ID, nil)
		outsider := bundle.f.User(bundle.f.Org(), identity.RoleAdmin)
		_, err := svc.Assign(ctx, bundle.org.ID, c.ID, &outsider.ID)
		testfactory.WantError(t, err, apperr.Invalid, "user_id is not a member of this organization")
		member := bundle.f.User(bundle.org, identity.RoleAgent)
		if got, err := svc.Assign(ctx, bundle.org.ID, c.ID, &member.ID); err != nil || got.AssignedTo == nil || *got.AssignedTo != member.ID {
			t.Fatalf("assign to a member: %+v, %v", got, err)
		}
		if got, err := svc.Assign(ctx, bundle.org.ID, c.ID, nil); err != nil || got.AssignedTo != nil {
			t.Fatalf("unassign: %+v, %v", got, err)
		}
	})

	t.Run("SearchTreatsWildcardsLiterally", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		bundle.f.Contact(bundle.org.ID, nil, func(c *models.Contact) { c.Name = "100% cotton" })
		bundle.f.Contact(bundle.org.ID, nil, func(c *models.Contact) { c.Name = "1000 cotton" })
		bundle.f.Contact(bundle.org.ID, nil, func(c *models.Contact) { c.Name = "a_b" })
		for search, want := range map[string]int64{"100%": 1, "0% c": 1, "_": 1, "cotton": 2, "COTTON": 2} {
			_, total, err := svc.List(ctx, bundle.org.ID, contacts.Filter{Viewer: contacts.EveryContact, Search: search}, paging.Params{Page: 1, Limit: 50})
			if err != nil || total.N != want || total.Estimate {
				t.Errorf("search %q: %d contacts, %v; want %d", search, total.N, err, want)
			}
		}
	})
}
