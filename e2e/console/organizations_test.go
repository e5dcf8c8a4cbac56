package console

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"wharf/internal/apptest"
)

// TestConsoleOrganizations drives the organizations page as the bootstrap
// super admin: an organization created, switched into with the header's
// organization switcher, an existing user added there with a role, the role
// changed, a new user added, a member removed after a confirmation, each
// checked through the API. Then the refusals: a user who is not a super
// admin has no navigation entry and gets the page's refusal, the API's 403
// for organizations, and the API's 403 when their users:update would reach
// a member who holds more than they do.
func TestConsoleOrganizations(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	f.CreateUser(admin, "ann@wharf.test", "Agent") // at home in the bootstrap organization
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "super")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	type member struct {
		ID       string `json:"id"`
		Email    string `json:"email"`
		RoleName string `json:"role_name"`
	}
	var northID string
	// members lists the organization's members through the API, with a
	// token of the super admin switched into it.
	members := func(orgID string) map[string]member {
		t.Helper()
		var s apptest.Session
		f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgID}, admin).Expect(t, 200).Into(t, &s)
		var out struct {
			Members []member `json:"members"`
		}
		f.Do("GET", "/api/organizations/members?limit=100", nil, s.Auth()).Expect(t, 200).Into(t, &out)
		m := map[string]member{}
		for _, x := range out.Members {
			m[x.Email] = x
		}
		return m
	}
	setRole := func(email, role string) {
		t.Helper()
		if !eval[bool](p, `(() => { const s = document.querySelector('select[aria-label="Role of `+email+`"]'); if (!s) return false; const o = [...s.options].find((o) => o.text === `+js(role)+`); s.value = o.value; s.dispatchEvent(new Event('change', { bubbles: true })); return true })()`) {
			p.fatalf("no role choice for %s", email)
		}
	}

	t.Run("an organization created, switched into, its members managed", func(t *testing.T) {
		p.in(t)
		p.click("link", "Organizations")
		p.seeRole("heading", "Organizations")
		p.seeRole("heading", "Members of Bootstrap Org")
		p.see(apptest.AdminEmail)
		p.click("button", "New organization")
		p.fill("Name", "Harbour North")
		p.axe("new organization")
		p.submitDialog()
		p.see("Organization Harbour North created; you are its admin.")
		var orgs struct {
			Organizations []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"organizations"`
		}
		f.Do("GET", "/api/organizations", nil, admin).Expect(t, 200).Into(t, &orgs)
		for _, o := range orgs.Organizations {
			if o.Name == "Harbour North" {
				northID = o.ID
			}
		}
		if northID == "" {
			t.Fatalf("the API does not list Harbour North: %+v", orgs.Organizations)
		}
		p.seeRole("button", "Switch to Harbour North")

		// The header's switcher has it at once.
		p.choose("Organization", "Harbour North")
		p.see("Switched to Harbour North.")
		p.seeRole("heading", "Members of Harbour North")

		p.click("button", "Add member")
		p.seeRole("heading", "Add a member to Harbour North")
		p.fill("Email", "ann@wharf.test")
		p.choose("Role", "Manager")
		p.axe("add member")
		p.submitDialog()
		p.see("ann@wharf.test is now a member of Harbour North.")
		if m, ok := members(northID)["ann@wharf.test"]; !ok || m.RoleName != "Manager" {
			t.Fatalf("ann in Harbour North: %+v (found %v)", m, ok)
		}

		setRole("ann@wharf.test", "Agent")
		p.see("ann@wharf.test is now Agent in Harbour North.")
		if m := members(northID)["ann@wharf.test"]; m.RoleName != "Agent" {
			t.Fatalf("after the change ann is %q", m.RoleName)
		}

		// A new user: an account is made, a member of this organization.
		p.click("button", "Add member")
		p.toggle("A new user (an account is created)")
		p.fill("Email", "bob@wharf.test")
		p.fill("Full name", "Bob Builder")
		p.fill("Password", "password-123")
		p.choose("Role", "Manager")
		p.submitDialog()
		p.see("bob@wharf.test is now a member of Harbour North.")
		p.see("Bob Builder")
		if m := members(northID)["bob@wharf.test"]; m.RoleName != "Manager" {
			t.Fatalf("bob in Harbour North: %+v", m)
		}
		bob := f.Login("bob@wharf.test", "password-123")
		if bob.User.OrganizationID != northID {
			t.Fatalf("bob's session opens in %s, not Harbour North", bob.User.OrganizationID)
		}
		p.reload() // the notices at the bottom right could cover the row's button
		p.seeRole("heading", "Members of Harbour North")
		p.see("Bob Builder")
		p.shot("organizations")
		p.do("a narrow window", chromedp.EmulateViewport(420, 860))
		p.shot("organizations-narrow")
		p.do("a wide window", chromedp.EmulateViewport(1280, 860))
		p.click("button", "Remove ann@wharf.test")
		p.seeRole("heading", "Remove this member?")
		p.see("Their account and their other organizations stay.")
		p.click("button", "Remove member")
		p.see("ann@wharf.test removed from Harbour North.")
		if _, ok := members(northID)["ann@wharf.test"]; ok {
			t.Fatal("ann is still a member of Harbour North")
		}
		// Her account stays: she still signs in at home.
		f.Login("ann@wharf.test", "password-123")

		// Back home with the page's own switch button.
		p.click("button", "Switch to Bootstrap Org")
		p.see("Switched to Bootstrap Org.")
		p.seeRole("heading", "Members of Bootstrap Org")
	})

	t.Run("not for those who are not super admins", func(t *testing.T) {
		// An organization's Admin (organizations:read and :write in the role)
		// is still not a super admin: no entry, the page refused.
		a := signInAs(t, b, f, "org-admin", "boss@wharf.test", "Admin")
		if a.has("link", "Organizations") {
			t.Fatal("a user who is not a super admin has the Organizations entry")
		}
		a.open("/console/organizations")
		a.seeRole("heading", "You cannot open this page")
		if a.has("button", "New organization") || a.has("button", "Add member") {
			t.Fatal("the refusal shows the page's controls")
		}

		m := signInAs(t, b, f, "manager", "mgr@wharf.test", "Manager")
		if m.has("link", "Organizations") {
			t.Fatal("a manager has the Organizations entry")
		}
		m.open("/console/organizations")
		m.seeRole("heading", "You cannot open this page")
		mgr := f.Login("mgr@wharf.test", "password-123").Auth()
		f.Do("GET", "/api/organizations", nil, mgr).Expect(t, 403)
		f.Do("POST", "/api/organizations", map[string]string{"name": "Mine"}, mgr).Expect(t, 403)

		// users:update never reaches a member who holds more than the caller.
		f.Do("POST", "/api/roles", map[string]any{"name": "Member keeper", "permissions": []string{"users:read", "users:update", "roles:read"}},
			admin).Expect(t, 201)
		keeper := f.CreateUser(admin, "keeper@wharf.test", "Member keeper").Auth()
		var out struct {
			Members []member `json:"members"`
		}
		f.Do("GET", "/api/organizations/members?search=wharf.test&limit=100", nil, keeper).Expect(t, 200).Into(t, &out)
		var adminMember string
		for _, x := range out.Members {
			if strings.EqualFold(x.Email, apptest.AdminEmail) {
				adminMember = x.ID
			}
		}
		if adminMember == "" {
			t.Fatalf("the admin is not among the members: %+v", out.Members)
		}
		// Into the keeper's own role: nothing they do not hold is granted, so
		// what refuses is the member's Admin role, which holds more.
		r := f.Do("PUT", "/api/organizations/members/"+adminMember, map[string]string{"role_id": f.RoleID(admin, "Member keeper")}, keeper)
		r.Expect(t, 403)
		if !strings.Contains(r.Message, "holds permissions you do not hold") {
			t.Fatalf("the refusal says %q", r.Message)
		}
		if m := members(f.Admin.User.OrganizationID)[apptest.AdminEmail]; m.RoleName != "Admin" {
			t.Fatalf("after the refusal the admin is %q", m.RoleName)
		}
	})
}
