package identity_test

import (
	"context"
	"testing"
	"time"

	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// The principal cache: two services on one database and one Redis are two
// api replicas. A change made through one takes effect at once on the other;
// a change that bypasses the services is seen only once the cache cannot be
// trusted (its version is gone) or its entry has aged out.
func TestPrincipalCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f      *testfactory.Factory
		org    *testfactory.Org
		admin  *identity.Principal
		a, b   *identity.Service // two replicas
		key    string            // an API key of member, created through a
		member models.User       // the member, an Admin
	}
	setup := func(t *testing.T, maxAge time.Duration) *testBundle {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		rdb := testenv.Redis(t, testenv.RedisURL(t))
		tokens := identity.NewTokens(testenv.RandomKey(), time.Hour, time.Hour)
		replica := func() *identity.Service {
			return identity.NewService(f.DB, tokens, nil, testenv.Quiet(), identity.WithPrincipalCache(rdb, maxAge))
		}
		bundle := &testBundle{f: f, org: f.Org(), a: replica(), b: replica()}
		var err error
		if bundle.admin, err = bundle.a.Principal(ctx, f.User(bundle.org, identity.RoleAdmin).ID, bundle.org.ID); err != nil {
			t.Fatal(err)
		}
		bundle.member = f.User(bundle.org, identity.RoleAdmin)
		mp, err := bundle.a.Principal(ctx, bundle.member.ID, bundle.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		k, err := bundle.a.CreateAPIKey(ctx, mp, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		bundle.key = k.Key
		return bundle
	}
	// can authenticates the key on svc twice (the second from the cache when
	// it is valid) and reports whether it may read users.
	can := func(t *testing.T, svc *identity.Service, key string) (bool, error) {
		t.Helper()
		var last bool
		for range 2 {
			p, err := svc.AuthenticateAPIKey(ctx, key)
			if err != nil {
				return false, err
			}
			if p.APIKeyID == nil {
				t.Fatal("principal without its key")
			}
			last = p.Can("users:read")
		}
		return last, nil
	}
	memberID := func(t *testing.T, b *testBundle) *models.OrganizationMember {
		var m models.OrganizationMember
		if err := b.f.DB.Take(&m, "user_id = ? AND organization_id = ?", b.member.ID, b.org.ID).Error; err != nil {
			t.Fatal(err)
		}
		return &m
	}

	t.Run("ADemotionOnOneReplicaHoldsAtOnceOnTheOther", func(t *testing.T) {
		t.Parallel()
		b := setup(t, time.Hour)
		if ok, err := can(t, b.b, b.key); err != nil || !ok {
			t.Fatalf("before: %v %v", ok, err)
		}
		m := memberID(t, b)
		agent := b.org.Roles[identity.RoleAgent]
		if err := b.a.UpdateMemberRole(ctx, b.admin, m.ID, &agent); err != nil {
			t.Fatal(err)
		}
		if ok, err := can(t, b.b, b.key); err != nil || ok {
			t.Fatalf("after the demotion the other replica still grants users:read (%v, %v)", ok, err)
		}
	})

	t.Run("RemovalAndDeactivationHoldAtOnceOnTheOther", func(t *testing.T) {
		t.Parallel()
		b := setup(t, time.Hour)
		if _, err := can(t, b.b, b.key); err != nil {
			t.Fatal(err)
		}
		inactive := false
		if _, err := b.a.UpdateUser(ctx, b.admin, b.member.ID, identity.UpdateUserInput{IsActive: &inactive}); err != nil {
			t.Fatal(err)
		}
		_, err := can(t, b.b, b.key)
		testfactory.WantError(t, err, apperr.Unauthorized, "user account is disabled")

		active := true
		if _, err := b.a.UpdateUser(ctx, b.admin, b.member.ID, identity.UpdateUserInput{IsActive: &active}); err != nil {
			t.Fatal(err)
		}
		if _, err := can(t, b.b, b.key); err != nil {
			t.Fatal(err)
		}
		if err := b.a.RemoveMember(ctx, b.admin, memberID(t, b).ID); err != nil {
			t.Fatal(err)
		}
		_, err = can(t, b.b, b.key)
		testfactory.WantError(t, err, apperr.Unauthorized, "user is not a member of this organization")
	})

	t.Run("ARoleChangeHoldsAtOnceOnTheOther", func(t *testing.T) {
		t.Parallel()
		b := setup(t, time.Hour)
		name := "Support"
		role, err := b.a.CreateRole(ctx, b.admin, identity.RoleInput{Name: &name, Permissions: &[]string{"users:read"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.a.UpdateMemberRole(ctx, b.admin, memberID(t, b).ID, &role.ID); err != nil {
			t.Fatal(err)
		}
		if ok, err := can(t, b.b, b.key); err != nil || !ok {
			t.Fatalf("with Support: %v %v", ok, err)
		}
		if _, err := b.a.UpdateRole(ctx, b.admin, role.ID, identity.RoleInput{Permissions: &[]string{"contacts:read"}}); err != nil {
			t.Fatal(err)
		}
		if ok, err := can(t, b.b, b.key); err != nil || ok {
			t.Fatalf("after the role lost users:read the other replica grants it (%v, %v)", ok, err)
		}
	})

	t.Run("ADeletedKeyIsRefusedAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, time.Hour)
		if _, err := can(t, b.b, b.key); err != nil {
			t.Fatal(err)
		}
		keys, err := b.a.ListAPIKeys(ctx, b.org.ID)
		if err != nil || len(keys) != 1 {
			t.Fatalf("keys %d %v", len(keys), err)
		}
		if err := b.a.DeleteAPIKey(ctx, b.org.ID, keys[0].ID); err != nil {
			t.Fatal(err)
		}
		_, err = b.b.AuthenticateAPIKey(ctx, b.key)
		testfactory.WantError(t, err, apperr.Unauthorized, "invalid API key")
	})

	// A write behind the services' back is not seen while the versions hold
	// (which is what makes it a cache); once Redis has lost the versions, or
	// the entry is older than its maximum age, the principal is read again.
	t.Run("LostVersionsAndAgeBoundTheCache", func(t *testing.T) {
		t.Parallel()
		b := setup(t, time.Hour)
		if _, err := can(t, b.b, b.key); err != nil {
			t.Fatal(err)
		}
		b.f.DB.Model(&models.User{}).Where("id = ?", b.member.ID).Update("is_active", false)
		if _, err := b.b.AuthenticateAPIKey(ctx, b.key); err != nil {
			t.Fatalf("the cached principal was not used: %v", err)
		}
		rdb := testenv.Redis(t, testenv.RedisURL(t))
		if err := rdb.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		_, err := b.b.AuthenticateAPIKey(ctx, b.key)
		testfactory.WantError(t, err, apperr.Unauthorized, "user account is disabled")

		young := setup(t, 50*time.Millisecond)
		if _, err := can(t, young.b, young.key); err != nil {
			t.Fatal(err)
		}
		young.f.DB.Model(&models.User{}).Where("id = ?", young.member.ID).Update("is_active", false)
		time.Sleep(60 * time.Millisecond)
		_, err = young.b.AuthenticateAPIKey(ctx, young.key)
		testfactory.WantError(t, err, apperr.Unauthorized, "user account is disabled")
	})
}
