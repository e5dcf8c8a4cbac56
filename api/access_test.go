package api_test

import (
	"strings"
	"testing"

	"wharf/internal/apptest"
	"wharf/internal/identity"
)

// userID finds the id of the user with this email in the caller's
// organization.
func userID(t *testing.T, e *apptest.Env, auth apptest.Auth, email string) string {
	t.Helper()
	var out struct {
		Users []userOut `json:"users"`
	}
	e.Do("GET", "/api/users?search="+email, nil, auth).Expect(t, 200).Into(t, &out)
	for _, u := range out.Users {
		if u.Email == email {
			return u.ID
		}
	}
	t.Fatalf("no user %s", email)
	return ""
}

// memberID finds the membership id of the user with this email in the
// caller's organization.
func memberID(t *testing.T, e *apptest.Env, auth apptest.Auth, email string) string {
	t.Helper()
	var out struct {
		Members []struct{ ID, Email string } `json:"members"`
	}
	e.Do("GET", "/api/organizations/members?search="+email, nil, auth).Expect(t, 200).Into(t, &out)
	for _, m := range out.Members {
		if m.Email == email {
			return m.ID
		}
	}
	t.Fatalf("no member %s", email)
	return ""
}

// expectRefused checks a 403 whose message contains want.
func expectRefused(t *testing.T, r *apptest.Resp, what, want string) {
	t.Helper()
	if r.Status != 403 || !strings.Contains(r.Message, want) {
		t.Errorf("%s: %d %s, want 403 containing %q", what, r.Status, r.Body, want)
	}
}

// loginStatus tries a login and returns the status.
func loginStatus(e *apptest.Env, email, password string) int {
	return e.Do("POST", "/api/auth/login", map[string]string{"email": email, "password": password}, nil).Status
}

// accountChanges are the changes to another user's login that need the
// caller to outrank the target everywhere.
var accountChanges = []struct {
	name   string
	method string
	set    map[string]any
}{
	{name: "password", method: "PUT", set: map[string]any{"password": "taken-over-123"}},
	{name: "email", method: "PUT", set: map[string]any{"email": "attacker@evil.test"}},
	{name: "deactivate", method: "PUT", set: map[string]any{"is_active": false}},
	{name: "delete", method: "DELETE"},
}

// hrRole creates a role holding the Agent's permissions plus every users:*
// permission: it may manage agents but is not an admin.
func hrRole(t *testing.T, e *apptest.Env, auth apptest.Auth) {
	t.Helper()
	perms := append(identity.SystemRolePermissions(identity.RoleAgent), "users:read", "users:create", "users:update", "users:delete")
	e.Do("POST", "/api/roles", map[string]any{"name": "HR", "permissions": perms}, auth).Expect(t, 201)
}

// A user manager who is not an admin cannot take over an admin's or the
// super admin's account, nor demote or remove an admin, but can still manage
// users who hold no more than they do. Super admins can change anyone.
func TestAccountChangesNeedEveryPermissionOfTheTarget(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	hrRole(t, e, admin.Auth())
	hr := e.CreateUser(admin.Auth(), "hr@x.com", "HR")
	boss := e.CreateUser(admin.Auth(), "boss@x.com", "Admin")
	bossID := userID(t, e, admin.Auth(), "boss@x.com")
	superID := userID(t, e, admin.Auth(), apptest.AdminEmail)

	for _, c := range accountChanges {
		r := e.Do(c.method, "/api/users/"+bossID, c.set, hr.Auth())
		expectRefused(t, r, "HR changes the admin's "+c.name, `you cannot change a user who holds permissions you do not hold (in organization "Bootstrap Org")`)
		r = e.Do(c.method, "/api/users/"+superID, c.set, hr.Auth())
		expectRefused(t, r, "HR changes the super admin's "+c.name, "only a super admin can change a super admin's account")
		// An organization admin holds every permission, yet is not a super admin.
		r = e.Do(c.method, "/api/users/"+superID, c.set, boss.Auth())
		expectRefused(t, r, "an org admin changes the super admin's "+c.name, "only a super admin can change a super admin's account")
	}
	// Organization-local changes: demoting or removing the admin.
	r := e.Do("PUT", "/api/users/"+bossID, map[string]any{"role_id": e.RoleID(admin.Auth(), "Agent")}, hr.Auth())
	expectRefused(t, r, "HR demotes the admin", "you cannot change a member who holds permissions you do not hold")
	bossMember := memberID(t, e, admin.Auth(), "boss@x.com")
	r = e.Do("PUT", "/api/organizations/members/"+bossMember, map[string]any{"role_id": e.RoleID(admin.Auth(), "Agent")}, hr.Auth())
	expectRefused(t, r, "HR demotes the admin by membership", "you cannot change a member who holds permissions you do not hold")
	r = e.Do("DELETE", "/api/organizations/members/"+bossMember, nil, hr.Auth())
	expectRefused(t, r, "HR removes the admin's membership", "you cannot change a member who holds permissions you do not hold")

	// Nothing changed.
	if loginStatus(e, "boss@x.com", "password-123") != 200 || loginStatus(e, apptest.AdminEmail, apptest.AdminPassword) != 200 {
		t.Fatal("a refused change altered a login")
	}
	var boss2 userOut
	e.Do("GET", "/api/users/"+bossID, nil, admin.Auth()).Expect(t, 200).Into(t, &boss2)
	if boss2.Role.Name != "Admin" || !boss2.IsActive || boss2.Email != "boss@x.com" {
		t.Fatalf("admin after refused changes: %+v", boss2)
	}

	// Equal or weaker targets can still be managed: HR manages an agent, an
	// admin manages HR.
	e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	agentID := userID(t, e, admin.Auth(), "agent@x.com")
	e.Do("PUT", "/api/users/"+agentID, map[string]any{"password": "reset-by-hr-1", "email": "agent2@x.com"}, hr.Auth()).Expect(t, 200)
	e.Login("agent2@x.com", "reset-by-hr-1")
	e.Do("PUT", "/api/users/"+agentID, map[string]any{"is_active": false}, hr.Auth()).Expect(t, 200)
	e.Do("PUT", "/api/users/"+agentID, map[string]any{"is_active": true}, hr.Auth()).Expect(t, 200)
	e.Do("DELETE", "/api/users/"+agentID, nil, hr.Auth()).Expect(t, 200)
	hrID := userID(t, e, admin.Auth(), "hr@x.com")
	e.Do("PUT", "/api/users/"+hrID, map[string]any{"password": "reset-by-boss-1"}, boss.Auth()).Expect(t, 200)
	e.Login("hr@x.com", "reset-by-boss-1")

	// Super admins can change anyone.
	e.Do("PUT", "/api/users/"+bossID, map[string]any{"password": "reset-by-root-1", "email": "boss2@x.com"}, admin.Auth()).Expect(t, 200)
	e.Login("boss2@x.com", "reset-by-root-1")
}

// Nobody changes their own password without the current one: a stolen
// session must not be enough to take over the account. Their own email and
// name remain theirs to change.
func TestOwnPasswordOnlyThroughMePassword(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	hrRole(t, e, admin.Auth())
	hr := e.CreateUser(admin.Auth(), "hr@x.com", "HR")
	for name, s := range map[string]apptest.Session{"HR": hr, "super admin": admin} {
		var me struct{ ID string }
		e.Do("GET", "/api/me", nil, s.Auth()).Expect(t, 200).Into(t, &me)
		r := e.Do("PUT", "/api/users/"+me.ID, map[string]any{"password": "new-password-1"}, s.Auth())
		expectRefused(t, r, name+" sets their own password", "use PUT /api/me/password")
	}
	if loginStatus(e, "hr@x.com", "password-123") != 200 || loginStatus(e, apptest.AdminEmail, apptest.AdminPassword) != 200 {
		t.Fatal("own password changed without the current one")
	}
	hrID := userID(t, e, admin.Auth(), "hr@x.com")
	e.Do("PUT", "/api/users/"+hrID, map[string]any{"email": "hr2@x.com", "full_name": "Helen"}, hr.Auth()).Expect(t, 200)
	e.Login("hr2@x.com", "password-123")
}

// The attack of issue 7: org A's user manager resets the password of a user
// who is a member of A and Admin of org B, then would sign in as them and
// switch into B. Refused, without naming B to someone who is not in it.
func TestCrossOrganizationTakeoverIsRefused(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, admin.Auth()).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, admin.Auth()).Expect(t, 200).Into(t, &inB)

	// The victim is an agent at home in A and Admin of B.
	e.CreateUser(admin.Auth(), "victim@x.com", "Agent")
	e.Do("POST", "/api/organizations/members", map[string]string{"email": "victim@x.com", "role_id": e.RoleID(inB.Auth(), "Admin")}, inB.Auth()).Expect(t, 201)
	victimID := userID(t, e, admin.Auth(), "victim@x.com")

	// A's HR holds every permission the victim holds in A.
	hrRole(t, e, admin.Auth())
	hr := e.CreateUser(admin.Auth(), "hr@x.com", "HR")
	for _, c := range accountChanges {
		r := e.Do(c.method, "/api/users/"+victimID, c.set, hr.Auth())
		expectRefused(t, r, "HR changes the victim's "+c.name, "(in another organization)")
		if strings.Contains(r.Message, "Org B") {
			t.Errorf("the refusal names an organization the caller is not in: %q", r.Message)
		}
	}
	if loginStatus(e, "victim@x.com", "password-123") != 200 || loginStatus(e, "victim@x.com", "taken-over-123") != 401 {
		t.Fatal("the victim's password changed")
	}

	// As a member of B without the Admin's permissions, HR is told where.
	e.Do("POST", "/api/organizations/members", map[string]string{"email": "hr@x.com"}, inB.Auth()).Expect(t, 201)
	r := e.Do("PUT", "/api/users/"+victimID, map[string]any{"password": "taken-over-123"}, hr.Auth())
	expectRefused(t, r, "HR, an agent of B, resets the victim's password", `(in organization "Org B")`)
	// A super admin may.
	e.Do("PUT", "/api/users/"+victimID, map[string]any{"password": "reset-by-root-1"}, admin.Auth()).Expect(t, 200)
}

// Deactivating or deleting an account removes an admin from every
// organization the user belongs to, so the last-admin guard holds in each.
func TestLastAdminGuardCoversEveryOrganization(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	founder := e.CreateUser(admin.Auth(), "founder@x.com", "Admin")
	// The founder creates an organization, of which they are the only admin.
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Founded"}, founder.Auth()).Expect(t, 201).Into(t, &org)
	founderID := userID(t, e, admin.Auth(), "founder@x.com")

	for _, c := range accountChanges[2:] { // deactivate, delete
		r := e.Do(c.method, "/api/users/"+founderID, c.set, admin.Auth())
		if r.Status != 409 || !strings.Contains(r.Message, `last active admin of organization "Founded"`) ||
			!strings.Contains(r.Message, "at least one active admin") {
			t.Fatalf("%s the only admin of another organization: %d %s", c.name, r.Status, r.Body)
		}
	}
	e.Login("founder@x.com", "password-123")

	// With a second admin there, the founder can be deactivated.
	var inFounded apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, admin.Auth()).Expect(t, 200).Into(t, &inFounded)
	e.CreateUser(inFounded.Auth(), "second@x.com", "Admin")
	e.Do("PUT", "/api/users/"+founderID, map[string]any{"is_active": false}, admin.Auth()).Expect(t, 200)
}

// API keys are not sessions: they cannot manage accounts, members or roles,
// whether through the routes or by calling the domain (internal/identity
// tests the latter).
func TestAPIKeysCannotManageAccountsMembersOrRoles(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var k createdKey
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, admin.Auth()).Expect(t, 201).Into(t, &k)
	key := apptest.APIKey(k.Key)
	e.CreateUser(admin.Auth(), "other@x.com", "Agent")
	otherID := userID(t, e, admin.Auth(), "other@x.com")
	adminID := userID(t, e, admin.Auth(), apptest.AdminEmail)
	otherMember := memberID(t, e, admin.Auth(), "other@x.com")
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Elsewhere"}, admin.Auth()).Expect(t, 201).Into(t, &org)
	var roleOut struct{ ID string }
	e.Do("POST", "/api/roles", map[string]any{"name": "Custom", "permissions": []string{"contacts:read"}}, admin.Auth()).Expect(t, 201).Into(t, &roleOut)
	adminRole := e.RoleID(admin.Auth(), "Admin")

	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{"PUT", "/api/users/" + otherID, map[string]any{"password": "taken-over-123"}},
		{"PUT", "/api/users/" + otherID, map[string]any{"email": "attacker@evil.test"}},
		{"PUT", "/api/users/" + otherID, map[string]any{"is_active": false}},
		{"PUT", "/api/users/" + otherID, map[string]any{"role_id": adminRole}},
		{"PUT", "/api/users/" + adminID, map[string]any{"password": "taken-over-123"}},
		{"DELETE", "/api/users/" + otherID, nil},
		{"POST", "/api/users", map[string]any{"email": "minted@x.com", "password": "password-123", "full_name": "M", "role_id": adminRole}},
		{"POST", "/api/organizations/members", map[string]any{"email": "other@x.com"}},
		{"PUT", "/api/organizations/members/" + otherMember, map[string]any{"role_id": adminRole}},
		{"DELETE", "/api/organizations/members/" + otherMember, nil},
		{"POST", "/api/roles", map[string]any{"name": "Minted", "permissions": []string{"contacts:read"}}},
		{"PUT", "/api/roles/" + roleOut.ID, map[string]any{"permissions": []string{"users:update"}}},
		{"DELETE", "/api/roles/" + roleOut.ID, nil},
		{"POST", "/api/organizations", map[string]any{"name": "Minted"}},
	} {
		r := e.Do(c.method, c.path, c.body, key)
		expectRefused(t, r, c.method+" "+c.path+" with an API key", "this endpoint needs a user session; API keys cannot use it")
	}
	// Nothing changed; reads stay open to keys.
	if loginStatus(e, "other@x.com", "password-123") != 200 || loginStatus(e, apptest.AdminEmail, apptest.AdminPassword) != 200 {
		t.Fatal("a key changed a password")
	}
	var other userOut
	e.Do("GET", "/api/users/"+otherID, nil, key).Expect(t, 200).Into(t, &other)
	if other.Email != "other@x.com" || !other.IsActive || other.Role.Name != "Agent" {
		t.Fatalf("a key changed the user: %+v", other)
	}
	e.Do("GET", "/api/roles/"+roleOut.ID, nil, key).Expect(t, 200)
	e.Do("GET", "/api/organizations/members", nil, key).Expect(t, 200)
	if loginStatus(e, "minted@x.com", "password-123") != 401 {
		t.Fatal("a key created a user")
	}
}

// The default role is what self-registration hands out: making a role the
// default needs roles:update and all of its permissions, and the default role
// never carries administrative permissions, whoever asks.
func TestDefaultRoleRules(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	for _, bad := range [][]string{{"users:read"}, {"roles:read"}, {"api_keys:read"}, {"webhooks:read"}, {"settings:update"}} {
		perms := append([]string{"contacts:read"}, bad...)
		r := e.Do("POST", "/api/roles", map[string]any{"name": "Open " + bad[0], "permissions": perms, "is_default": true}, admin.Auth())
		if r.Status != 400 || !strings.Contains(r.Message, "the default role may not carry "+bad[0]) {
			t.Errorf("default role with %s: %d %s", bad[0], r.Status, r.Body)
		}
	}
	var support struct{ ID string }
	e.Do("POST", "/api/roles", map[string]any{"name": "Support", "permissions": []string{"contacts:read"}}, admin.Auth()).Expect(t, 201).Into(t, &support)
	e.Do("POST", "/api/roles", map[string]any{"name": "Wide", "permissions": []string{"users:read", "webhooks:update"}}, admin.Auth()).Expect(t, 201)
	r := e.Do("PUT", "/api/roles/"+e.RoleID(admin.Auth(), "Wide"), map[string]any{"is_default": true}, admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "users:read, webhooks:update") {
		t.Fatalf("offending keys not named: %q", r.Message)
	}
	e.Do("PUT", "/api/roles/"+support.ID, map[string]any{"is_default": true}, admin.Auth()).Expect(t, 200)
	// Adding such a permission to the default role is refused; others are fine.
	r = e.Do("PUT", "/api/roles/"+support.ID, map[string]any{"permissions": []string{"contacts:read", "api_keys:create"}}, admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "api_keys:create") {
		t.Fatalf("message %q", r.Message)
	}
	e.Do("PUT", "/api/roles/"+support.ID, map[string]any{"permissions": []string{"contacts:read", "settings:read"}}, admin.Auth()).Expect(t, 200)

	// A role keeper holding roles:update cannot make default a role with
	// permissions they lack; roles:create alone cannot mark a new role default.
	e.Do("POST", "/api/roles", map[string]any{"name": "Keeper", "permissions": []string{"roles:read", "roles:create", "roles:update", "contacts:read"}}, admin.Auth()).Expect(t, 201)
	e.Do("POST", "/api/roles", map[string]any{"name": "Creator", "permissions": []string{"roles:read", "roles:create", "contacts:read"}}, admin.Auth()).Expect(t, 201)
	keeper := e.CreateUser(admin.Auth(), "keeper@x.com", "Keeper")
	creator := e.CreateUser(admin.Auth(), "creator@x.com", "Creator")
	var campaigner struct{ ID string }
	e.Do("POST", "/api/roles", map[string]any{"name": "Campaigner", "permissions": []string{"campaigns:read"}}, admin.Auth()).Expect(t, 201).Into(t, &campaigner)
	r = e.Do("PUT", "/api/roles/"+campaigner.ID, map[string]any{"is_default": true}, keeper.Auth())
	expectRefused(t, r, "keeper makes Campaigner default", "campaigns:read")
	r = e.Do("POST", "/api/roles", map[string]any{"name": "Mine", "permissions": []string{"contacts:read"}, "is_default": true}, creator.Auth())
	expectRefused(t, r, "creator makes a new role default", "making a role the default needs roles:update")
	var reader struct {
		ID        string `json:"id"`
		IsDefault bool   `json:"is_default"`
	}
	e.Do("POST", "/api/roles", map[string]any{"name": "Reader", "permissions": []string{"contacts:read"}, "is_default": true}, keeper.Auth()).Expect(t, 201).Into(t, &reader)
	if !reader.IsDefault {
		t.Fatal("keeper could not make a role it fully holds the default")
	}
}

// Self-registration is a per-organization setting: closed in the bootstrap
// organization, open in organizations created later, switchable through both
// settings families.
func TestSelfRegistrationCanBeSwitchedOff(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	register := func(email, org string) *apptest.Resp {
		return e.Do("POST", "/api/auth/register", map[string]string{"email": email, "password": "password-123", "full_name": "R", "organization_id": org}, nil)
	}
	closed := func(r *apptest.Resp, what string) {
		t.Helper()
		if r.Status != 403 || r.Message != "self-registration is disabled for this organization" {
			t.Fatalf("%s: %d %s", what, r.Status, r.Body)
		}
	}
	setting := func(auth apptest.Auth) (long, short bool) {
		t.Helper()
		var l, s struct {
			Settings struct {
				SelfRegistrationEnabled *bool `json:"self_registration_enabled"`
			} `json:"settings"`
		}
		e.Do("GET", "/api/org/settings", nil, auth).Expect(t, 200).Into(t, &l)
		e.Do("GET", "/api/organizations/settings", nil, auth).Expect(t, 200).Into(t, &s)
		if l.Settings.SelfRegistrationEnabled == nil || s.Settings.SelfRegistrationEnabled == nil {
			t.Fatal("a settings family does not show self_registration_enabled")
		}
		return *l.Settings.SelfRegistrationEnabled, *s.Settings.SelfRegistrationEnabled
	}

	boot := admin.User.OrganizationID
	closed(register("a@x.com", boot), "bootstrap organization")
	if l, s := setting(admin.Auth()); l || s {
		t.Fatal("the bootstrap organization shows self-registration enabled")
	}
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Open"}, admin.Auth()).Expect(t, 201).Into(t, &org)
	var in apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, admin.Auth()).Expect(t, 200).Into(t, &in)
	if l, s := setting(in.Auth()); !l || !s {
		t.Fatal("a new organization shows self-registration disabled")
	}
	register("b@x.com", org.ID).Expect(t, 201)

	e.Do("PUT", "/api/organizations/settings", map[string]any{"self_registration_enabled": false}, in.Auth()).Expect(t, 200)
	closed(register("c@x.com", org.ID), "after the short family closed it")
	if loginStatus(e, "c@x.com", "password-123") != 401 {
		t.Fatal("a refused registration created the user")
	}
	e.Do("PUT", "/api/org/settings", map[string]any{"self_registration_enabled": true}, in.Auth()).Expect(t, 200)
	register("c@x.com", org.ID).Expect(t, 201)
	e.Do("PUT", "/api/org/settings", map[string]any{"self_registration_enabled": true}, admin.Auth()).Expect(t, 200)
	register("d@x.com", boot).Expect(t, 201)

	// A default role that carries an administrative permission (possible
	// only in data older than the rule) closes self-registration too.
	if err := e.DB.Exec(`INSERT INTO role_permissions (role_id, permission_id)
		SELECT r.id, p.id FROM roles r, permissions p
		WHERE r.organization_id = ? AND r.is_default AND p.resource = 'users' AND p.action = 'update'`, org.ID).Error; err != nil {
		t.Fatal(err)
	}
	r := register("e@x.com", org.ID)
	if r.Status != 403 || !strings.Contains(r.Message, "users:update") {
		t.Fatalf("registration into an organization whose default role carries users:update: %d %s", r.Status, r.Body)
	}
}
