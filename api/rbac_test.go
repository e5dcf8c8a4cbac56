package api_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/internal/identity"
)

// fillPath replaces path parameters with random UUIDs.
func fillPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			parts[i] = uuid.NewString()
		}
	}
	return strings.Join(parts, "/")
}

// openOnce is e.Do for a stream: it reads the status and the message of a
// refusal, and closes a stream that was let through.
func openOnce(e *apptest.Env) func(method, path string, body any, auth apptest.Auth) *apptest.Resp {
	return func(_, path string, _ any, auth apptest.Auth) *apptest.Resp {
		s := e.OpenStream(e.Server.URL, path, auth, nil)
		defer s.Close()
		r := &apptest.Resp{Status: s.Status, Body: s.Body}
		var env struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(s.Body, &env) == nil {
			r.Message = env.Message
		}
		return r
	}
}

// TestRouteWalkEnforcesPermissions calls every route of the router table with
// an Agent token and with a token whose role has no permission at all, and
// expects 403 exactly where the route's declared permission is missing.
func TestRouteWalkEnforcesPermissions(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	e.Do("POST", "/api/roles", map[string]any{"name": "Nothing", "permissions": []string{}}, admin.Auth()).Expect(t, 201)
	agent := e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	nothing := e.CreateUser(admin.Auth(), "nothing@x.com", "Nothing")
	agentPerms := identity.SystemRolePermissions(identity.RoleAgent)

	routes := e.API.Server.Routes()
	if len(routes) < 30 {
		t.Fatalf("only %d routes in the table", len(routes))
	}
	checked := 0
	for _, rt := range routes {
		if !rt.Access.NeedsAuth() {
			continue
		}
		path := fillPath(rt.Path)
		for _, who := range []struct {
			name  string
			sess  apptest.Session
			perms []string
		}{{"agent", agent, agentPerms}, {"no-permission", nothing, nil}} {
			do := e.Do
			if rt.Produces == "text/event-stream" && rt.Method == "GET" {
				do = openOnce(e) // a stream that is let through never ends
			}
			r := do(rt.Method, path, map[string]any{}, who.sess.Auth())
			keys := rt.Access.Keys()
			held := slices.ContainsFunc(keys, func(k string) bool { return slices.Contains(who.perms, k) })
			want403 := len(keys) > 0 && !held
			if strings.HasPrefix(rt.Access.String(), "self") {
				want403 = !held // the path names someone else
			}
			if want403 && r.Status != 403 {
				t.Errorf("%s %s as %s: status %d, want 403 (%s)", rt.Method, rt.Path, who.name, r.Status, rt.Access)
			}
			if !want403 && r.Status == 403 {
				t.Errorf("%s %s as %s: 403, but the role holds %s: %s", rt.Method, rt.Path, who.name, rt.Access, r.Body)
			}
			if r.Status == 403 && !strings.Contains(r.Message, "insufficient permissions") && !strings.Contains(r.Message, "API keys") {
				t.Errorf("%s %s: 403 message %q", rt.Method, rt.Path, r.Message)
			}
			checked++
		}
		// Without credentials every protected route is a 401.
		do := e.Do
		if rt.Produces == "text/event-stream" && rt.Method == "GET" {
			do = openOnce(e)
		}
		if r := do(rt.Method, path, map[string]any{}, nil); r.Status != 401 {
			t.Errorf("%s %s without credentials: %d, want 401", rt.Method, rt.Path, r.Status)
		}
	}
	t.Logf("checked %d route/role pairs", checked)
}

func TestSystemRolesAreCreatedAndImmutable(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var roles struct {
		Roles []struct {
			ID, Name        string
			IsSystem        bool `json:"is_system"`
			IsDefault       bool `json:"is_default"`
			PermissionCount int  `json:"permission_count"`
		} `json:"roles"`
	}
	e.Do("GET", "/api/roles", nil, admin.Auth()).Expect(t, 200).Into(t, &roles)
	var perms struct {
		Permissions []struct{ Key string } `json:"permissions"`
	}
	e.Do("GET", "/api/permissions", nil, admin.Auth()).Expect(t, 200).Into(t, &perms)
	names := map[string]int{}
	for _, r := range roles.Roles {
		if !r.IsSystem {
			t.Fatalf("unexpected custom role %s", r.Name)
		}
		names[r.Name] = r.PermissionCount
		if r.IsDefault != (r.Name == "Agent") {
			t.Fatalf("default role should be Agent, got %s default=%v", r.Name, r.IsDefault)
		}
	}
	if len(names) != 3 || names["Admin"] != len(perms.Permissions) ||
		names["Manager"] != len(identity.SystemRolePermissions("Manager")) || names["Agent"] != len(identity.SystemRolePermissions("Agent")) {
		t.Fatalf("system roles %v (catalogue has %d)", names, len(perms.Permissions))
	}
	// The matrix only uses keys of the catalogue.
	keys := map[string]bool{}
	for _, p := range perms.Permissions {
		keys[p.Key] = true
	}
	for _, role := range []string{"Manager", "Agent"} {
		for _, k := range identity.SystemRolePermissions(role) {
			if !keys[k] {
				t.Fatalf("%s holds unknown key %s", role, k)
			}
		}
	}

	// A new organization gets its own three system roles.
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Other"}, admin.Auth()).Expect(t, 201).Into(t, &org)
	var n int64
	e.DB.Table("roles").Where("organization_id = ? AND is_system", org.ID).Count(&n)
	if n != 3 {
		t.Fatalf("new organization has %d system roles", n)
	}

	for _, name := range []string{"Admin", "Manager", "Agent"} {
		id := e.RoleID(admin.Auth(), name)
		r := e.Do("PUT", "/api/roles/"+id, map[string]any{"name": "Renamed", "permissions": []string{}}, admin.Auth())
		if r.Status != 403 || r.Message != "system roles cannot be modified" {
			t.Fatalf("edit %s: %d %s", name, r.Status, r.Body)
		}
		r = e.Do("DELETE", "/api/roles/"+id, nil, admin.Auth())
		if r.Status != 403 || r.Message != "system roles cannot be deleted" {
			t.Fatalf("delete %s: %d %s", name, r.Status, r.Body)
		}
	}
}

func TestCustomRoles(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	r := e.Do("POST", "/api/roles", map[string]any{"name": "Bad", "permissions": []string{"contacts:read", "contacts:fly", "nope"}}, admin.Auth()).Expect(t, 400)
	if !strings.Contains(r.Message, "contacts:fly") || !strings.Contains(r.Message, "nope") {
		t.Fatalf("unknown keys not named: %q", r.Message)
	}
	e.Do("POST", "/api/roles", map[string]any{"name": "NoPerms"}, admin.Auth()).Expect(t, 400)
	e.Do("POST", "/api/roles", map[string]any{"permissions": []string{}}, admin.Auth()).Expect(t, 400)

	var role struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		IsDefault   bool   `json:"is_default"`
		Permissions []struct{ Resource, Action string }
	}
	e.Do("POST", "/api/roles", map[string]any{"name": "Support", "description": "d", "permissions": []string{"contacts:read", "messages:read"}}, admin.Auth()).
		Expect(t, 201).Into(t, &role)
	if len(role.Permissions) != 2 {
		t.Fatalf("role %+v", role)
	}
	e.Do("POST", "/api/roles", map[string]any{"name": "Support", "permissions": []string{}}, admin.Auth()).Expect(t, 409)
	e.Do("PUT", "/api/roles/"+role.ID, map[string]any{"permissions": []string{"contacts:read"}, "is_default": true}, admin.Auth()).Expect(t, 200).Into(t, &role)
	if len(role.Permissions) != 1 || !role.IsDefault {
		t.Fatalf("updated role %+v", role)
	}
	// The new default replaced Agent as the default.
	var agent struct {
		IsDefault bool `json:"is_default"`
	}
	e.Do("GET", "/api/roles/"+e.RoleID(admin.Auth(), "Agent"), nil, admin.Auth()).Expect(t, 200).Into(t, &agent)
	if agent.IsDefault {
		t.Fatal("two default roles")
	}
	// New users get the default role.
	u := e.CreateUser(admin.Auth(), "support@x.com", "")
	var me struct{ Role struct{ Name string } }
	e.Do("GET", "/api/me", nil, u.Auth()).Expect(t, 200).Into(t, &me)
	if me.Role.Name != "Support" {
		t.Fatalf("new user role %q, want Support", me.Role.Name)
	}
	e.Do("DELETE", "/api/roles/"+role.ID, nil, admin.Auth()).Expect(t, 409) // default role
	e.Do("PUT", "/api/roles/"+e.RoleID(admin.Auth(), "Agent"), map[string]any{"is_default": true}, admin.Auth()).Expect(t, 403)

	var other struct{ ID string }
	e.Do("POST", "/api/roles", map[string]any{"name": "Temp", "permissions": []string{}}, admin.Auth()).Expect(t, 201).Into(t, &other)
	e.CreateUser(admin.Auth(), "temp@x.com", "Temp")
	r = e.Do("DELETE", "/api/roles/"+other.ID, nil, admin.Auth()).Expect(t, 409)
	if !strings.Contains(r.Message, "assigned to 1 member") {
		t.Fatalf("message %q", r.Message)
	}
	var search struct{ Roles []struct{ Name string } }
	e.Do("GET", "/api/roles?search=sup", nil, admin.Auth()).Expect(t, 200).Into(t, &search)
	if len(search.Roles) != 1 || search.Roles[0].Name != "Support" {
		t.Fatalf("search %+v", search)
	}
}

// Nobody but a super admin can grant a permission they do not hold, nor
// take over the account of someone who holds more than they do.
func TestNoPrivilegeEscalation(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	e.Do("POST", "/api/roles", map[string]any{"name": "UserAdmin", "permissions": []string{"users:read", "users:create", "users:update", "users:delete", "roles:read", "roles:create"}}, admin.Auth()).Expect(t, 201)
	ua := e.CreateUser(admin.Auth(), "ua@x.com", "UserAdmin")
	r := e.Do("POST", "/api/users", map[string]any{"email": "evil@x.com", "password": "password-123", "full_name": "E", "role_id": e.RoleID(admin.Auth(), "Admin")}, ua.Auth()).Expect(t, 403)
	if !strings.Contains(r.Message, "cannot grant") {
		t.Fatalf("message %q", r.Message)
	}
	e.Do("POST", "/api/roles", map[string]any{"name": "Mega", "permissions": []string{"settings:update"}}, ua.Auth()).Expect(t, 403)
	var me struct{ ID string }
	e.Do("GET", "/api/me", nil, ua.Auth()).Expect(t, 200).Into(t, &me)
	e.Do("PUT", "/api/users/"+me.ID, map[string]any{"role_id": e.RoleID(admin.Auth(), "Admin")}, ua.Auth()).Expect(t, 403)
	// Granting what one holds is fine.
	e.Do("POST", "/api/roles", map[string]any{"name": "Reader", "permissions": []string{"users:read"}}, ua.Auth()).Expect(t, 201)

	// Taking over an admin: password, email, deactivation, deletion.
	e.CreateUser(admin.Auth(), "boss@x.com", "Admin")
	var users struct {
		Users []struct{ ID, Email string } `json:"users"`
	}
	e.Do("GET", "/api/users?search=boss", nil, ua.Auth()).Expect(t, 200).Into(t, &users)
	boss := "/api/users/" + users.Users[0].ID
	for _, body := range []map[string]any{{"password": "taken-over-123"}, {"email": "ua@evil.test"}, {"is_active": false}} {
		r := e.Do("PUT", boss, body, ua.Auth()).Expect(t, 403)
		if !strings.Contains(r.Message, "permissions you do not hold") {
			t.Fatalf("%v: message %q", body, r.Message)
		}
	}
	e.Do("DELETE", boss, nil, ua.Auth()).Expect(t, 403)
	e.Login("boss@x.com", "password-123")
}
