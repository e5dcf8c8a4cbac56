package accounts_test

import (
	"context"
	"testing"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platformsim"
)

// Claims on one phone number: any organization may claim it, the first
// whose token the provider accepts for the number owns it, and the owner
// keeps it until its account is deleted.
func TestClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f        *testfactory.Factory
		provider *testfactory.Provider
		a, b     *testfactory.Org
	}
	setup := func(t *testing.T) (*accounts.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		svc, _ := newService(t, f, p)
		return svc, &testBundle{f: f, provider: p, a: f.Org(), b: f.Org()}
	}
	// claim is an organization's unverified, pending account for the
	// provider's number.
	claim := func(bundle *testBundle, org *testfactory.Org) models.PlatformAccount {
		return bundle.f.AccountAt(bundle.provider, org.ID, func(a *models.PlatformAccount) {
			a.Status, a.VerifiedAt = models.AccountPending, nil
		})
	}
	reload := func(t *testing.T, bundle *testBundle, acc models.PlatformAccount) models.PlatformAccount {
		t.Helper()
		var row models.PlatformAccount
		if err := bundle.f.DB.Take(&row, "id = ?", acc.ID).Error; err != nil {
			t.Fatal(err)
		}
		return row
	}

	t.Run("TheFirstVerificationOwnsTheNumberAndDisconnectsTheOtherClaims", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		mine, theirs := claim(bundle, bundle.a), claim(bundle, bundle.b)
		res, err := svc.Test(ctx, bundle.a.ID, mine.ID)
		if err != nil || !res.Connected {
			t.Fatalf("test: %+v, %v", res, err)
		}
		if got := reload(t, bundle, mine); got.VerifiedAt == nil || got.Status != models.AccountActive || got.VerifiedName != "Acme" {
			t.Errorf("owner %+v: want verified, active, with the provider's details", got)
		}
		if got := reload(t, bundle, theirs); got.VerifiedAt != nil || got.Status != models.AccountDisconnected ||
			got.LastError != "another organization verified this phone number" {
			t.Errorf("other claim %+v: want unverified and disconnected, saying why", got)
		}
		// The other organization can neither verify its claim nor make a
		// new one; its refresh leaves the claim disconnected.
		_, err = svc.Test(ctx, bundle.b.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.Conflict, "this phone number is connected to another organization")
		if err := svc.Refresh(ctx, bundle.b.ID, theirs.ID); err != nil {
			t.Fatal(err)
		}
		if got := reload(t, bundle, theirs); got.VerifiedAt != nil || got.Status != models.AccountDisconnected {
			t.Errorf("refreshed claim %+v: want it still unverified and disconnected", got)
		}
		third := bundle.f.Org()
		_, err = svc.Create(ctx, third.ID, accounts.Input{Name: ptr("Mine too"), PhoneNumberID: ptr(bundle.provider.PhoneNumberID()),
			BusinessAccountID: ptr(bundle.provider.WABA.ID), AccessToken: ptr(testfactory.Token)})
		testfactory.WantError(t, err, apperr.Conflict, "this phone number is connected to another organization")
	})

	t.Run("OnlyTheOwnerReceivesTheNumbersWebhooks", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		claim(bundle, bundle.b)
		routes, err := svc.Routes(ctx, []string{bundle.provider.PhoneNumberID()}, []string{bundle.provider.WABA.ID})
		if err != nil || len(routes) != 0 {
			t.Fatalf("routes of an unverified claim: %+v, %v; want none", routes, err)
		}
		owner := bundle.f.AccountAt(bundle.provider, bundle.a.ID)
		routes, err = svc.Routes(ctx, []string{bundle.provider.PhoneNumberID()}, nil)
		if err != nil || len(routes) != 1 || routes[0].AccountID != owner.ID || routes[0].OrganizationID != bundle.a.ID {
			t.Fatalf("routes %+v, %v; want the owner's only", routes, err)
		}
		// The handshake answers for unverified claims too: it routes nothing.
		var claimed models.PlatformAccount
		bundle.f.DB.Take(&claimed, "organization_id = ?", bundle.b.ID)
		if ok, err := svc.HasVerifyToken(ctx, claimed.WebhookVerifyToken); err != nil || !ok {
			t.Errorf("verify token of a claim: %v, %v", ok, err)
		}
		if ok, _ := svc.HasVerifyToken(ctx, ""); ok {
			t.Error("an empty verify token matched")
		}
	})

	t.Run("DeletingTheOwnerReleasesTheNumber", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		owner := bundle.f.AccountAt(bundle.provider, bundle.a.ID)
		theirs := claim(bundle, bundle.b)
		if err := svc.Delete(ctx, bundle.a.ID, owner.ID); err != nil {
			t.Fatal(err)
		}
		if res, err := svc.Test(ctx, bundle.b.ID, theirs.ID); err != nil || !res.Connected {
			t.Fatalf("test after the owner left: %+v, %v", res, err)
		}
		if got := reload(t, bundle, theirs); got.VerifiedAt == nil || got.Status != models.AccountActive {
			t.Errorf("claim %+v: want it verified and active", got)
		}
	})

	t.Run("AClaimMustNameTheNumbersOwnBusinessAccount", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		// Another business account the token can read, without the number.
		other := bundle.provider.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Other", AccessToken: testfactory.Token})
		acc := claim(bundle, bundle.a)
		bundle.f.DB.Model(&models.PlatformAccount{}).Where("id = ?", acc.ID).Update("business_account_id", other.ID)
		res, err := svc.Test(ctx, bundle.a.ID, acc.ID)
		if err != nil || res.Connected {
			t.Fatalf("test: %+v, %v; want not connected", res, err)
		}
		if got := reload(t, bundle, acc); got.VerifiedAt != nil || got.LastError == "" {
			t.Errorf("claim %+v: want unverified, with the reason", got)
		}
	})

	// The account:refresh job may run late (a busy worker) or slowly (the
	// provider's answers); a send the provider refused for the account
	// meanwhile disconnected it, and the refresh must not make it active
	// again, nor clear the reason. A new token (the fix of a token problem)
	// makes it pending, and its refresh active.
	t.Run("ARefreshDoesNotUndoALaterDisconnect", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		acc := bundle.f.AccountAt(bundle.provider, bundle.a.ID)
		const reason = "the provider refused the account: (#131042) Business eligibility payment issue"
		if err := svc.Disconnect(ctx, bundle.a.ID, acc.ID, reason); err != nil {
			t.Fatal(err)
		}
		if err := svc.Refresh(ctx, bundle.a.ID, acc.ID); err != nil {
			t.Fatal(err)
		}
		if got := reload(t, bundle, acc); got.Status != models.AccountDisconnected || got.LastError != reason || got.VerifiedName != "Acme" {
			t.Fatalf("after a refresh %+v: want still disconnected with the reason, the details read", got)
		}
		if _, err := svc.Update(ctx, bundle.a.ID, acc.ID, accounts.Input{AccessToken: ptr(testfactory.Token)}); err != nil {
			t.Fatal(err)
		}
		if got := reload(t, bundle, acc); got.Status != models.AccountPending {
			t.Fatalf("after a new token %+v: want pending", got)
		}
		if err := svc.Refresh(ctx, bundle.a.ID, acc.ID); err != nil {
			t.Fatal(err)
		}
		if got := reload(t, bundle, acc); got.Status != models.AccountActive || got.LastError != "" {
			t.Fatalf("refreshed with the new token %+v: want active, no error", got)
		}
	})

	t.Run("AnInvalidTokenDisconnectsAnActiveAccount", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		acc := bundle.f.AccountAt(bundle.provider, bundle.a.ID)
		bundle.provider.Sim.RevokeToken(testfactory.Token)
		res, err := svc.Test(ctx, bundle.a.ID, acc.ID)
		if err != nil || res.Connected || res.Error == "" {
			t.Fatalf("test: %+v, %v; want not connected with the provider's error", res, err)
		}
		if got := reload(t, bundle, acc); got.Status != models.AccountDisconnected || got.VerifiedAt == nil {
			t.Errorf("account %+v: want disconnected, and still the number's owner", got)
		}
	})
}
