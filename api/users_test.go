package api_test

import (
	"strings"
	"testing"

	"wharf/internal/apptest"
)

type userOut struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	FullName    string `json:"full_name"`
	RoleID      string `json:"role_id"`
	IsActive    bool   `json:"is_active"`
	IsAvailable bool   `json:"is_available"`
	IsMember    bool   `json:"is_member"`
	Role        struct {
		ID, Name string
		IsSystem bool `json:"is_system"`
	} `json:"role"`
}

func TestUserCRUD(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	create := func(body map[string]any) *apptest.Resp { return e.Do("POST", "/api/users", body, admin.Auth()) }
	create(map[string]any{"email": "u@x.com", "password": "1234567", "full_name": "U"}).Expect(t, 400)
	create(map[string]any{"email": "u@x.com", "password": "password-123"}).Expect(t, 400)
	create(map[string]any{"email": "bad", "password": "password-123", "full_name": "U"}).Expect(t, 400)
	create(map[string]any{"email": "u@x.com", "password": "password-123", "full_name": "U", "role_id": "nope"}).Expect(t, 400)
	var u userOut
	create(map[string]any{"email": "u@x.com", "password": "password-123", "full_name": "Uma"}).Expect(t, 201).Into(t, &u)
	if u.Role.Name != "Agent" || !u.IsActive || !u.IsAvailable || u.IsMember || u.RoleID != u.Role.ID {
		t.Fatalf("created user %+v", u)
	}
	r := create(map[string]any{"email": "U@X.com", "password": "password-123", "full_name": "U"}).Expect(t, 409)
	if r.Message != "a user with this email already exists" {
		t.Fatalf("message %q", r.Message)
	}

	upd := func(body map[string]any) *apptest.Resp { return e.Do("PUT", "/api/users/"+u.ID, body, admin.Auth()) }
	upd(map[string]any{"password": "short"}).Expect(t, 400)
	upd(map[string]any{"email": apptest.AdminEmail}).Expect(t, 409)
	upd(map[string]any{"full_name": "Uma Two", "password": "another-pass-1", "role_id": e.RoleID(admin.Auth(), "Manager")}).Expect(t, 200).Into(t, &u)
	if u.FullName != "Uma Two" || u.Role.Name != "Manager" {
		t.Fatalf("updated %+v", u)
	}
	e.Login("u@x.com", "another-pass-1")

	var list struct {
		Users []userOut `json:"users"`
		Total int       `json:"total"`
	}
	e.Do("GET", "/api/users?search=UMA", nil, admin.Auth()).Expect(t, 200).Into(t, &list)
	if len(list.Users) != 1 || list.Total != 1 {
		t.Fatalf("search %+v", list)
	}
	e.Do("GET", "/api/users?search=%25", nil, admin.Auth()).Expect(t, 200).Into(t, &list)
	if len(list.Users) != 0 {
		t.Fatal("% must match literally")
	}

	// Deactivation blocks login and ends sessions.
	sess := e.Login("u@x.com", "another-pass-1")
	upd(map[string]any{"is_active": false}).Expect(t, 200)
	e.Do("POST", "/api/auth/login", map[string]string{"email": "u@x.com", "password": "another-pass-1"}, nil).Expect(t, 401)
	e.Do("GET", "/api/me", nil, sess.Auth()).Expect(t, 401)
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": sess.RefreshToken}, nil).Expect(t, 401)

	e.Do("DELETE", "/api/users/"+u.ID, nil, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/users/"+u.ID, nil, admin.Auth()).Expect(t, 404)
	e.Do("GET", "/api/users/not-a-uuid", nil, admin.Auth()).Expect(t, 400)
	var me struct{ ID string }
	e.Do("GET", "/api/me", nil, admin.Auth()).Expect(t, 200).Into(t, &me)
	e.Do("DELETE", "/api/users/"+me.ID, nil, admin.Auth()).Expect(t, 400)
	e.Do("PUT", "/api/users/"+me.ID, map[string]any{"is_active": false}, admin.Auth()).Expect(t, 400)
}

func TestAvailabilityIsSelfServiceButNotForOthers(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	agent := e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	other := e.CreateUser(admin.Auth(), "other@x.com", "Agent")
	var me, them struct{ ID string }
	e.Do("GET", "/api/me", nil, agent.Auth()).Expect(t, 200).Into(t, &me)
	e.Do("GET", "/api/me", nil, other.Auth()).Expect(t, 200).Into(t, &them)
	var u userOut
	e.Do("PUT", "/api/users/"+me.ID+"/availability", map[string]any{"is_available": false}, agent.Auth()).Expect(t, 200).Into(t, &u)
	if u.IsAvailable {
		t.Fatal("availability not updated")
	}
	e.Do("PUT", "/api/users/"+them.ID+"/availability", map[string]any{"is_available": false}, agent.Auth()).Expect(t, 403)
	e.Do("PUT", "/api/users/"+them.ID+"/availability", map[string]any{"is_available": false}, admin.Auth()).Expect(t, 200)
	e.Do("PUT", "/api/users/"+them.ID+"/availability", map[string]any{}, admin.Auth()).Expect(t, 400)
}

func TestLastAdminCannotBeRemoved(t *testing.T) {
	e := apptest.New(t, nil)
	boot := e.Admin()
	// An organization whose only admin is a regular user.
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Solo"}, boot.Auth()).Expect(t, 201).Into(t, &org)
	var in apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, boot.Auth()).Expect(t, 200).Into(t, &in)
	var members struct {
		Members []struct{ ID, Email string } `json:"members"`
	}
	e.Do("GET", "/api/organizations/members", nil, in.Auth()).Expect(t, 200).Into(t, &members)
	if len(members.Members) != 1 {
		t.Fatalf("members %+v", members)
	}
	only := members.Members[0].ID
	r := e.Do("PUT", "/api/organizations/members/"+only, map[string]string{"role_id": e.RoleID(in.Auth(), "Agent")}, in.Auth()).Expect(t, 409)
	if !strings.Contains(r.Message, "at least one active admin") {
		t.Fatalf("message %q", r.Message)
	}
	e.Do("DELETE", "/api/organizations/members/"+only, nil, in.Auth()).Expect(t, 409)
	// With a second admin the first may step down.
	second := e.CreateUser(in.Auth(), "second@x.com", "Admin")
	_ = second
	e.Do("PUT", "/api/organizations/members/"+only, map[string]string{"role_id": e.RoleID(in.Auth(), "Agent")}, in.Auth()).Expect(t, 200)
}

func TestMembers(t *testing.T) {
	e := apptest.New(t, nil)
	boot := e.Admin()
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Partner"}, boot.Auth()).Expect(t, 201).Into(t, &org)
	var in apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": org.ID}, boot.Auth()).Expect(t, 200).Into(t, &in)

	// A user of the bootstrap organization joins Partner as a member.
	e.CreateUser(boot.Auth(), "guest@x.com", "Agent")
	add := func(body map[string]any) *apptest.Resp {
		return e.Do("POST", "/api/organizations/members", body, in.Auth())
	}
	add(map[string]any{}).Expect(t, 400)
	add(map[string]any{"email": "ghost@x.com"}).Expect(t, 404)
	add(map[string]any{"user_id": "x"}).Expect(t, 400)
	r := add(map[string]any{"email": "guest@x.com"}).Expect(t, 201)
	if !strings.Contains(string(r.Body), `"message"`) {
		t.Fatalf("add answer %s", r.Body)
	}
	add(map[string]any{"email": "guest@x.com"}).Expect(t, 409)

	var list struct {
		Members []struct {
			ID             string `json:"id"`
			RoleName       string `json:"role_name"`
			Email          string `json:"email"`
			OrganizationID string `json:"organization_id"`
			IsDefault      bool   `json:"is_default"`
			IsActive       bool   `json:"is_active"`
		} `json:"members"`
		Total int `json:"total"`
		Page  int `json:"page"`
		Limit int `json:"limit"`
	}
	e.Do("GET", "/api/organizations/members", nil, in.Auth()).Expect(t, 200).Into(t, &list)
	if list.Total != 2 || list.Page != 1 || list.Limit != 50 || len(list.Members) != 2 {
		t.Fatalf("members %+v", list)
	}
	e.Do("GET", "/api/organizations/members?limit=1&page=2", nil, in.Auth()).Expect(t, 200).Into(t, &list)
	if list.Total != 2 || len(list.Members) != 1 || list.Page != 2 || list.Limit != 1 {
		t.Fatalf("page 2: %+v", list)
	}
	e.Do("GET", "/api/organizations/members?limit=1000", nil, in.Auth()).Expect(t, 200).Into(t, &list)
	if list.Limit != 100 {
		t.Fatalf("limit not capped: %d", list.Limit)
	}
	e.Do("GET", "/api/organizations/members?page=0", nil, in.Auth()).Expect(t, 400)
	e.Do("GET", "/api/organizations/members?limit=abc", nil, in.Auth()).Expect(t, 400)

	// The guest is a cross-organization member in Partner: only the role can change.
	var users struct {
		Users []userOut `json:"users"`
	}
	e.Do("GET", "/api/users?search=guest", nil, in.Auth()).Expect(t, 200).Into(t, &users)
	guest := users.Users[0]
	if !guest.IsMember {
		t.Fatalf("guest not flagged is_member: %+v", guest)
	}
	e.Do("PUT", "/api/users/"+guest.ID, map[string]any{"full_name": "Renamed"}, in.Auth()).Expect(t, 403)
	e.Do("PUT", "/api/users/"+guest.ID, map[string]any{"role_id": e.RoleID(in.Auth(), "Manager")}, in.Auth()).Expect(t, 200)
	// Deleting a member user removes the membership only.
	e.Do("DELETE", "/api/users/"+guest.ID, nil, in.Auth()).Expect(t, 200)
	e.Login("guest@x.com", "password-123")

	// Member role change and removal by member id.
	add(map[string]any{"email": "guest@x.com"}).Expect(t, 201)
	e.Do("GET", "/api/organizations/members?search=guest", nil, in.Auth()).Expect(t, 200).Into(t, &list)
	mid := list.Members[0].ID
	e.Do("PUT", "/api/organizations/members/"+mid, map[string]any{}, in.Auth()).Expect(t, 400)
	e.Do("PUT", "/api/organizations/members/"+mid, map[string]any{"role_id": e.RoleID(in.Auth(), "Manager")}, in.Auth()).Expect(t, 200)
	e.Do("GET", "/api/organizations/members?search=guest", nil, in.Auth()).Expect(t, 200).Into(t, &list)
	if list.Members[0].RoleName != "Manager" {
		t.Fatalf("role %q", list.Members[0].RoleName)
	}
	e.Do("DELETE", "/api/organizations/members/"+mid, nil, in.Auth()).Expect(t, 200)
	e.Do("DELETE", "/api/organizations/members/"+mid, nil, in.Auth()).Expect(t, 404)
}

func TestOrganizations(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	e.Do("POST", "/api/organizations", map[string]string{"name": "  "}, admin.Auth()).Expect(t, 400)
	e.Do("POST", "/api/organizations", map[string]string{"name": strings.Repeat("x", 101)}, admin.Auth()).Expect(t, 400)
	var a, b struct{ ID, Name, Slug, CreatedAt string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Acme Corp!"}, admin.Auth()).Expect(t, 201).Into(t, &a)
	e.Do("POST", "/api/organizations", map[string]string{"name": "Acme Corp!"}, admin.Auth()).Expect(t, 201).Into(t, &b)
	if !strings.HasPrefix(a.Slug, "acme-corp-") || a.Slug == b.Slug || len(a.Slug) != len("acme-corp-")+6 {
		t.Fatalf("slugs %q %q", a.Slug, b.Slug)
	}
	var cur struct{ ID, Name, Slug string }
	e.Do("GET", "/api/organizations/current", nil, admin.Auth()).Expect(t, 200).Into(t, &cur)
	if cur.ID != admin.User.OrganizationID || cur.Name != "Bootstrap Org" {
		t.Fatalf("current %+v", cur)
	}
}
