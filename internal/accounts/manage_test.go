package accounts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
)

func ptr[T any](v T) *T { return &v }

// newService builds the accounts domain on the factory's database, with a
// queue of the test's own and the factory's simulator as the provider.
func newService(t *testing.T, f *testfactory.Factory, p *testfactory.Provider) (*accounts.Service, *testenv.Queue) {
	q := testenv.NewQueue(t)
	settings := orgsettings.NewService(f.DB, f.Box, nil, nil)
	return accounts.NewService(f.DB, f.Box, p.Client, settings, q.Enqueuer, testenv.Quiet()), q
}

func TestManage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f     *testfactory.Factory
		org   *testfactory.Org
		queue *testenv.Queue
	}
	setup := func(t *testing.T) (*accounts.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, q := newService(t, f, f.Provider(nil))
		return svc, &testBundle{f: f, org: f.Org(), queue: q}
	}
	valid := func() accounts.Input {
		return accounts.Input{Name: ptr("Main"), PhoneNumberID: ptr("123456"), BusinessAccountID: ptr("654321"), AccessToken: ptr("secret-token")}
	}

	t.Run("CreateRequiresEveryFieldAndNumericIDs", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for _, c := range []struct {
			edit func(*accounts.Input)
			msg  string
		}{
			{func(in *accounts.Input) { in.Name = nil }, "name is required"},
			{func(in *accounts.Input) { in.PhoneNumberID = ptr(" ") }, "phone_number_id is required"},
			{func(in *accounts.Input) { in.BusinessAccountID = nil }, "business_account_id is required"},
			{func(in *accounts.Input) { in.AccessToken = ptr("") }, "access_token is required"},
			{func(in *accounts.Input) { in.PhoneNumberID = ptr("12a4") }, "must be the provider's numeric ids"},
			{func(in *accounts.Input) { in.Name = ptr(strings.Repeat("n", 101)) }, "at most 100 characters"},
		} {
			in := valid()
			c.edit(&in)
			_, err := svc.Create(ctx, bundle.org.ID, in)
			testfactory.WantError(t, err, apperr.Invalid, c.msg)
		}
		if n := bundle.f.Count("platform_accounts", ""); n != 0 {
			t.Errorf("%d accounts stored by refused creates", n)
		}
	})

	t.Run("CreateStoresAPendingClaimWithTheTokenSealedAndQueuesARefresh", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		a, err := svc.Create(ctx, bundle.org.ID, valid())
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != models.AccountPending || a.VerifiedAt != nil || a.AccessToken != "secret-token" || a.WebhookVerifyToken == "" {
			t.Errorf("created %+v: want a pending, unverified claim with its token and a generated verify token", a.PlatformAccount)
		}
		var stored models.PlatformAccount
		bundle.f.DB.Take(&stored, "id = ?", a.ID)
		if strings.Contains(string(stored.AccessTokenEnc), "secret-token") {
			t.Error("the access token is stored in clear")
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeAccountRefresh] != 1 {
			t.Errorf("queued %v, want one %s", got, jobs.TypeAccountRefresh)
		}
	})

	t.Run("NamesAndNumbersAreUniqueInTheOrganization", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		if _, err := svc.Create(ctx, bundle.org.ID, valid()); err != nil {
			t.Fatal(err)
		}
		in := valid()
		in.Name = ptr("MAIN")
		in.PhoneNumberID = ptr("999")
		_, err := svc.Create(ctx, bundle.org.ID, in)
		testfactory.WantError(t, err, apperr.Conflict, "already has an account with this name or phone number id")
		in = valid()
		in.Name = ptr("Second")
		_, err = svc.Create(ctx, bundle.org.ID, in)
		testfactory.WantError(t, err, apperr.Conflict, "already has an account with this name or phone number id")
	})

	t.Run("UpdateKeepsTheNumberAndValidatesTheTier", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		acc := bundle.f.Account(bundle.org.ID)
		_, err := svc.Update(ctx, bundle.org.ID, acc.ID, accounts.Input{PhoneNumberID: ptr("42")})
		testfactory.WantError(t, err, apperr.Invalid, "cannot change")
		_, err = svc.Update(ctx, bundle.org.ID, acc.ID, accounts.Input{MessagingTier: ptr("TIER_9K")})
		testfactory.WantError(t, err, apperr.Invalid, "messaging_tier must be one of")
		_, err = svc.Update(ctx, bundle.org.ID, acc.ID, accounts.Input{Name: ptr(" ")})
		testfactory.WantError(t, err, apperr.Invalid, "name must be 1 to 100 characters")
		a, err := svc.Update(ctx, bundle.org.ID, acc.ID, accounts.Input{MessagingTier: ptr(" tier_100k ")})
		if err != nil || a.MessagingTierOverride != "TIER_100K" {
			t.Fatalf("tier override: %v, %q", err, a.MessagingTierOverride)
		}
		if a, err = svc.Update(ctx, bundle.org.ID, acc.ID, accounts.Input{MessagingTier: ptr("")}); err != nil || a.MessagingTierOverride != "" {
			t.Fatalf("clearing the override: %v, %q", err, a.MessagingTierOverride)
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeAccountRefresh] != 0 {
			t.Errorf("an update without a new token queued %v", got)
		}
		if _, err = svc.Update(ctx, bundle.org.ID, acc.ID, accounts.Input{AccessToken: ptr("new-token")}); err != nil {
			t.Fatal(err)
		}
		if got := bundle.queue.TaskTypes(t); got[jobs.TypeAccountRefresh] != 1 {
			t.Errorf("a new token queued %v, want a refresh", got)
		}
	})

	t.Run("AnotherOrganizationsAccountIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		theirs := bundle.f.Account(bundle.f.Org().ID)
		_, err := svc.Get(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "account not found")
		_, err = svc.Update(ctx, bundle.org.ID, theirs.ID, accounts.Input{Name: ptr("mine")})
		testfactory.WantError(t, err, apperr.NotFound, "account not found")
		testfactory.WantError(t, svc.Delete(ctx, bundle.org.ID, theirs.ID), apperr.NotFound, "account not found")
		_, err = svc.Test(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "account not found")
		_, err = svc.Register(ctx, bundle.org.ID, theirs.ID, "")
		testfactory.WantError(t, err, apperr.NotFound, "account not found")
		if list, _ := svc.List(ctx, bundle.org.ID); len(list) != 0 {
			t.Errorf("the organization lists %d accounts of another", len(list))
		}
		if bundle.f.Count("platform_accounts", "id = ?", theirs.ID) != 1 {
			t.Error("another organization's account was deleted")
		}
	})

	t.Run("SenderIsAnActiveAccountOfTheOrganization", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		_, err := svc.Sender(ctx, bundle.org.ID, "", nil)
		testfactory.WantError(t, err, apperr.Invalid, "no active account to send from")
		pending := bundle.f.Account(bundle.org.ID, func(a *models.PlatformAccount) { a.Name, a.Status = "Pending", models.AccountPending })
		_, err = svc.Sender(ctx, bundle.org.ID, "pending", nil)
		testfactory.WantError(t, err, apperr.Invalid, `account "Pending" is pending, not active`)
		_, err = svc.Sender(ctx, bundle.org.ID, "nope", nil)
		testfactory.WantError(t, err, apperr.Invalid, `no account named "nope"`)
		active := bundle.f.Account(bundle.org.ID)
		theirs := bundle.f.Account(bundle.f.Org().ID)
		for name, preferred := range map[string]*uuid.UUID{"none": nil, "another organization's": &theirs.ID, "a deleted one": ptr(uuid.New())} {
			a, err := svc.Sender(ctx, bundle.org.ID, "", preferred)
			if err != nil || a.ID != active.ID {
				t.Errorf("preferring %s: %v, %v; want the active account", name, a, err)
			}
		}
		if _, err := svc.Sender(ctx, bundle.org.ID, "", &pending.ID); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("preferring a pending account: %v, want it refused", err)
		}
	})
}
