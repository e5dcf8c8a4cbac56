package console

import (
	"testing"
	"time"

	"wharf/internal/apptest"
)

// TestConsoleUsersAndRoles drives the users and roles pages: a user added
// with a role, given another role, deactivated (and then refused at sign
// in) and removed after a confirmation; a role made from the permission
// matrix; a system role shown read-only; and, for a user who may create
// roles but holds few permissions, the permissions they do not hold greyed
// out while the ones they hold can be given.
func TestConsoleUsersAndRoles(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	type user struct {
		ID       string `json:"id"`
		IsActive bool   `json:"is_active"`
		Role     struct {
			Name string `json:"name"`
		} `json:"role"`
	}
	find := func(email string) *user {
		var out struct {
			Users []struct {
				user
				Email string `json:"email"`
			} `json:"users"`
		}
		f.Do("GET", "/api/users?search="+email, nil, admin).Expect(t, 200).Into(t, &out)
		for _, u := range out.Users {
			if u.Email == email {
				x := u.user
				return &x
			}
		}
		return nil
	}

	t.Run("a user added, given another role, deactivated", func(t *testing.T) {
		p.in(t)
		p.click("link", "Users")
		p.seeRole("heading", "Users")
		p.see("(you)")
		p.click("button", "Add user")
		p.fill("Email", "ann@wharf.test")
		p.fill("Full name", "Ann Agent")
		p.fill("Password", "password-123")
		p.choose("Role", "Agent")
		p.axe("add user")
		p.submitDialog()
		p.see("User ann@wharf.test added.")
		p.see("Ann Agent")
		if u := find("ann@wharf.test"); u == nil || u.Role.Name != "Agent" {
			t.Fatalf("the added user: %+v", u)
		}
		eval[bool](p, `(() => { const s = document.querySelector('select[aria-label="Role of ann@wharf.test"]'); const o = [...s.options].find((o) => o.text === 'Manager'); s.value = o.value; s.dispatchEvent(new Event('change', { bubbles: true })); return true })()`)
		p.see("ann@wharf.test is now Manager.")
		if u := find("ann@wharf.test"); u.Role.Name != "Manager" {
			t.Fatalf("after the change the role is %s", u.Role.Name)
		}
		p.click("button", "Deactivate ann@wharf.test")
		p.see("ann@wharf.test deactivated: they cannot sign in.")
		p.seeRole("button", "Activate ann@wharf.test")
		if r := f.Do("POST", "/api/auth/login", map[string]any{"email": "ann@wharf.test", "password": "password-123"}, nil); r.Status/100 == 2 {
			t.Fatalf("a deactivated user signed in: %d", r.Status)
		}
		p.shot("users")
	})

	t.Run("a role made from the matrix; a system role is read-only", func(t *testing.T) {
		p.in(t)
		p.click("link", "Roles")
		p.seeRole("link", "Admin")
		p.click("link", "New role")
		p.seeRole("heading", "New role")
		p.waitUntil("the permission matrix", `!!labelled('campaigns:read')`)
		p.fill("Name", "Campaign runner")
		p.fill("Description", "Runs campaigns, nothing else")
		p.toggle("campaigns:read")
		p.toggle("campaigns:create")
		p.see("Permissions (2 chosen)")
		p.axe("new role")
		p.click("button", "Create role")
		p.see("Role Campaign runner created.")
		var roles struct {
			Roles []struct {
				Name            string `json:"name"`
				PermissionCount int    `json:"permission_count"`
			} `json:"roles"`
		}
		f.Do("GET", "/api/roles", nil, admin).Expect(t, 200).Into(t, &roles)
		found := false
		for _, r := range roles.Roles {
			found = found || (r.Name == "Campaign runner" && r.PermissionCount == 2)
		}
		if !found {
			t.Fatalf("roles %+v", roles.Roles)
		}
		p.open("/console/roles")
		p.click("link", "Agent")
		p.see("A system role: its permissions are fixed.")
		p.waitUntil("the permission matrix", `!!labelled('contacts:read')`)
		if !eval[bool](p, `labelled('contacts:read').disabled`) || p.has("button", "Save role") {
			t.Fatal("a system role can be changed in the page")
		}
	})

	t.Run("what the caller does not hold is greyed out", func(t *testing.T) {
		f.Do("POST", "/api/roles", map[string]any{"name": "Role maker", "permissions": []string{"roles:read", "roles:create", "users:read", "campaigns:read"}},
			admin).Expect(t, 201)
		m := signInAs(t, b, f, "role-maker", "rm@wharf.test", "Role maker")
		m.open("/console/roles/new")
		m.seeRole("heading", "New role")
		m.see("Greyed permissions are ones you do not hold")
		m.waitUntil("the permission matrix", `!!labelled('webhooks:delete') && !!labelled('campaigns:read')`)
		if !eval[bool](m, `labelled('webhooks:delete').disabled`) {
			t.Fatal("a permission the caller does not hold can be ticked")
		}
		if eval[bool](m, `labelled('campaigns:read').disabled`) {
			t.Fatal("a permission the caller holds is greyed out")
		}
		m.fill("Name", "Readers")
		m.toggle("campaigns:read")
		m.click("button", "Create role")
		m.see("Role Readers created.")
		m.shot("greyed")
		// The users page: no Add user, no role change, no remove.
		m.open("/console/users")
		m.see("Ann Agent")
		if m.has("button", "Add user") || m.has("button", "Remove ann@wharf.test") ||
			eval[bool](m, `!!document.querySelector('select[aria-label="Role of ann@wharf.test"]')`) {
			t.Fatal("a user without users:create/update/delete is offered them")
		}
	})

	t.Run("remove asks first", func(t *testing.T) {
		p.in(t)
		p.open("/console/users")
		p.click("button", "Remove ann@wharf.test")
		p.seeRole("heading", "Remove this user?")
		p.click("button", "Remove user")
		p.see("User ann@wharf.test removed.")
		apptest.Eventually(t, 5*time.Second, "the row gone", func() bool { return !p.has("button", "Remove ann@wharf.test") })
		if u := find("ann@wharf.test"); u != nil {
			t.Fatalf("the removed user is still listed: %+v", u)
		}
	})
}
