package identity_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

func TestRoles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f     *testfactory.Factory
		org   *testfactory.Org
		admin *identity.Principal
	}
	setup := func(t *testing.T) (*identity.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc := identity.NewService(f.DB, identity.NewTokens(testenv.RandomKey(), time.Hour, time.Hour), nil, testenv.Quiet())
		org := f.Org()
		p, err := svc.Principal(ctx, f.User(org, identity.RoleAdmin).ID, org.ID)
		if err != nil {
			t.Fatal(err)
		}
		return svc, &testBundle{f: f, org: org, admin: p}
	}
	ptr := func(v string) *string { return &v }

	t.Run("SystemRolesCannotChange", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for _, name := range []string{identity.RoleAdmin, identity.RoleManager, identity.RoleAgent} {
			id := bundle.org.Roles[name]
			_, err := svc.UpdateRole(ctx, bundle.admin, id, identity.RoleInput{Name: ptr("Renamed")})
			testfactory.WantError(t, err, apperr.Forbidden, "system roles cannot be modified")
			testfactory.WantError(t, svc.DeleteRole(ctx, bundle.admin, id), apperr.Forbidden, "system roles cannot be deleted")
		}
		if bundle.f.Count("roles", "organization_id = ? AND is_system", bundle.org.ID) != 3 {
			t.Error("a system role changed")
		}
	})

	t.Run("ACustomRoleGrantsOnlyKnownPermissionsItsCreatorHolds", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		_, err := svc.CreateRole(ctx, bundle.admin, identity.RoleInput{Name: ptr("Support"), Permissions: &[]string{"contacts:read", "nope:x", "x:y"}})
		testfactory.WantError(t, err, apperr.Invalid, "unknown permission keys: nope:x, x:y")
		_, err = svc.CreateRole(ctx, bundle.admin, identity.RoleInput{Name: ptr("Support")})
		testfactory.WantError(t, err, apperr.Invalid, "permissions is required")
		manager, err := svc.Principal(ctx, bundle.f.User(bundle.org, identity.RoleManager).ID, bundle.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.CreateRole(ctx, manager, identity.RoleInput{Name: ptr("Keys"), Permissions: &[]string{"contacts:read", "api_keys:create", "users:delete"}})
		testfactory.WantError(t, err, apperr.Forbidden, "you cannot grant permissions you do not hold: api_keys:create, users:delete")
		role, err := svc.CreateRole(ctx, manager, identity.RoleInput{Name: ptr("Support"), Permissions: &[]string{"contacts:read", "contacts:read"}})
		if err != nil || role.Name != "Support" {
			t.Fatalf("create: %+v, %v", role, err)
		}
		_, err = svc.CreateRole(ctx, bundle.admin, identity.RoleInput{Name: ptr("Support"), Permissions: &[]string{}})
		testfactory.WantError(t, err, apperr.Conflict, "a role with this name already exists")
	})

	t.Run("ARoleInUseCannotBeDeleted", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		role, err := svc.CreateRole(ctx, bundle.admin, identity.RoleInput{Name: ptr("Support"), Permissions: &[]string{"contacts:read"}})
		if err != nil {
			t.Fatal(err)
		}
		bundle.org.Roles["Support"] = role.ID
		member := bundle.f.User(bundle.org, "Support")
		testfactory.WantError(t, svc.DeleteRole(ctx, bundle.admin, role.ID), apperr.Conflict, "role is assigned to 1 member(s)")
		bundle.f.DB.Where("user_id = ?", member.ID).Delete(&models.OrganizationMember{})
		if err := svc.DeleteRole(ctx, bundle.admin, role.ID); err != nil {
			t.Fatalf("delete an unused role: %v", err)
		}
	})

	t.Run("AnotherOrganizationsRoleIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		other := bundle.f.Org()
		theirs, err := svc.CreateRole(ctx, &identity.Principal{UserID: bundle.admin.UserID, OrgID: other.ID, IsSuperAdmin: true},
			identity.RoleInput{Name: ptr("Theirs"), Permissions: &[]string{}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Role(ctx, bundle.org.ID, theirs.ID)
		testfactory.WantError(t, err, apperr.NotFound, "role not found")
		_, err = svc.UpdateRole(ctx, bundle.admin, theirs.ID, identity.RoleInput{Name: ptr("Mine")})
		testfactory.WantError(t, err, apperr.NotFound, "role not found")
		testfactory.WantError(t, svc.DeleteRole(ctx, bundle.admin, theirs.ID), apperr.NotFound, "role not found")
		roles, err := svc.ListRoles(ctx, bundle.org.ID, "")
		if err != nil || len(roles) != 3 {
			t.Errorf("the organization lists %d roles, %v; want its three system roles", len(roles), err)
		}
	})

	t.Run("TheFactorysSystemRolesAreIdentitys", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		agent, err := svc.Principal(ctx, bundle.f.User(bundle.org, identity.RoleAgent).ID, bundle.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, want := agent.PermissionList(), identity.SystemRolePermissions(identity.RoleAgent)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) || agent.RoleName != identity.RoleAgent {
			t.Errorf("agent %s holds %v, want %v", agent.RoleName, got, want)
		}
		all, _ := svc.Permissions(ctx)
		if len(bundle.admin.PermissionList()) != len(all) {
			t.Errorf("admin holds %d of %d permissions", len(bundle.admin.PermissionList()), len(all))
		}
	})
}
