package api_test

import (
	"testing"

	"wharf/internal/apptest"
)

// TestTenantIsolation creates two organizations with one admin each and shows
// that every resource of one is a 404 to the other.
func TestTenantIsolation(t *testing.T) {
	e := apptest.New(t, nil)
	boot := e.Admin()

	// Organization B with its own admin (not a member of A).
	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, boot.Auth()).Expect(t, 201).Into(t, &orgB)
	e.Do("POST", "/api/auth/register", map[string]string{"email": "b-admin@x.com", "password": "password-123", "full_name": "B", "organization_id": orgB.ID}, nil).Expect(t, 201)
	var bootInB apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, boot.Auth()).Expect(t, 200).Into(t, &bootInB)
	var bUsers struct {
		Users []struct{ ID, Email string } `json:"users"`
	}
	e.Do("GET", "/api/users?search=b-admin", nil, bootInB.Auth()).Expect(t, 200).Into(t, &bUsers)
	e.Do("PUT", "/api/users/"+bUsers.Users[0].ID, map[string]string{"role_id": e.RoleID(bootInB.Auth(), "Admin")}, bootInB.Auth()).Expect(t, 200)
	b := e.Login("b-admin@x.com", "password-123")
	if b.User.OrganizationID != orgB.ID {
		t.Fatalf("B admin logged into %s", b.User.OrganizationID)
	}

	// Organization A (the bootstrap organization) has an admin who is not a super admin.
	a := e.CreateUser(boot.Auth(), "a-admin@x.com", "Admin")

	// Resources of A.
	var user struct{ ID string }
	e.Do("POST", "/api/users", map[string]any{"email": "a-user@x.com", "password": "password-123", "full_name": "U"}, a.Auth()).Expect(t, 201).Into(t, &user)
	var role struct{ ID string }
	e.Do("POST", "/api/roles", map[string]any{"name": "A role", "permissions": []string{"contacts:read"}}, a.Auth()).Expect(t, 201).Into(t, &role)
	var key struct{ ID string }
	e.Do("POST", "/api/api-keys", map[string]any{"name": "A key"}, a.Auth()).Expect(t, 201).Into(t, &key)
	var members struct {
		Members []struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		} `json:"members"`
	}
	e.Do("GET", "/api/organizations/members?search=a-user", nil, a.Auth()).Expect(t, 200).Into(t, &members)
	memberID := members.Members[0].ID

	for _, c := range []struct{ method, path string }{
		{"GET", "/api/users/" + user.ID},
		{"PUT", "/api/users/" + user.ID},
		{"DELETE", "/api/users/" + user.ID},
		{"PUT", "/api/users/" + user.ID + "/availability"},
		{"GET", "/api/roles/" + role.ID},
		{"PUT", "/api/roles/" + role.ID},
		{"DELETE", "/api/roles/" + role.ID},
		{"DELETE", "/api/api-keys/" + key.ID},
		{"PUT", "/api/organizations/members/" + memberID},
		{"DELETE", "/api/organizations/members/" + memberID},
	} {
		body := map[string]any{"is_available": true, "role_id": e.RoleID(b.Auth(), "Agent"), "full_name": "x"}
		if r := e.Do(c.method, c.path, body, b.Auth()); r.Status != 404 {
			t.Errorf("B: %s %s = %d, want 404: %s", c.method, c.path, r.Status, r.Body)
		}
	}
	// B cannot switch into A, and A's role id cannot be given to B's users.
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": a.User.OrganizationID}, b.Auth()).Expect(t, 404)
	e.Do("POST", "/api/users", map[string]any{"email": "b2@x.com", "password": "password-123", "full_name": "x", "role_id": role.ID}, b.Auth()).Expect(t, 400)

	// Lists and settings of B show nothing of A.
	var bList struct {
		Users []struct{ Email string } `json:"users"`
	}
	e.Do("GET", "/api/users", nil, b.Auth()).Expect(t, 200).Into(t, &bList)
	for _, u := range bList.Users {
		if u.Email == "a-user@x.com" || u.Email == "a-admin@x.com" {
			t.Fatalf("B lists A's user %s", u.Email)
		}
	}
	var keys []struct{ ID string }
	e.Do("GET", "/api/api-keys", nil, b.Auth()).Expect(t, 200).Into(t, &keys)
	if len(keys) != 0 {
		t.Fatal("B lists A's API key")
	}
	e.Do("PUT", "/api/org/settings", map[string]any{"timezone": "Asia/Tokyo"}, a.Auth()).Expect(t, 200)
	var st struct{ Settings struct{ Timezone string } }
	e.Do("GET", "/api/org/settings", nil, b.Auth()).Expect(t, 200).Into(t, &st)
	if st.Settings.Timezone != "UTC" {
		t.Fatal("B sees A's settings")
	}
	// Organization lists: a tenant admin sees its own organizations only.
	var orgs struct {
		Organizations []struct{ ID string } `json:"organizations"`
	}
	e.Do("GET", "/api/organizations", nil, b.Auth()).Expect(t, 200).Into(t, &orgs)
	if len(orgs.Organizations) != 1 || orgs.Organizations[0].ID != orgB.ID {
		t.Fatalf("B sees organizations %+v", orgs)
	}
	e.Do("GET", "/api/organizations", nil, boot.Auth()).Expect(t, 200).Into(t, &orgs)
	if len(orgs.Organizations) != 2 {
		t.Fatalf("super admin sees %d organizations, want 2", len(orgs.Organizations))
	}
	// Still all there for A.
	e.Do("GET", "/api/users/"+user.ID, nil, a.Auth()).Expect(t, 200)
	e.Do("GET", "/api/roles/"+role.ID, nil, a.Auth()).Expect(t, 200)
}
