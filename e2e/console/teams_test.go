package console

import (
	"testing"
	"time"

	"wharf/internal/apptest"
)

// TestConsoleTeams drives the teams pages: a team created (a taken name
// refused next to the Name field first) with a strategy, members added as
// agent and manager with their availability shown, the strategy changed, a
// member removed after a confirmation; an agent of the team shown it
// read-only; its manager (without teams:update) offered what the API lets
// a team manager do; a user without teams:read refused the page; and a delete that
// asks first.
func TestConsoleTeams(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	ann := f.CreateUser(admin, "ann@wharf.test", "Agent")
	f.CreateUser(admin, "bob@wharf.test", "Manager")
	// Ann is away: the members table says so.
	f.Do("PUT", "/api/users/"+ann.User.ID+"/availability", map[string]any{"is_available": false}, ann.Auth()).Expect(t, 200)
	f.Do("POST", "/api/teams", map[string]any{"name": "Sales"}, admin).Expect(t, 201)
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	type team struct {
		ID                 string `json:"id"`
		Name               string `json:"name"`
		Description        string `json:"description"`
		AssignmentStrategy string `json:"assignment_strategy"`
	}
	find := func(name string) *team {
		var out struct {
			Teams []team `json:"teams"`
		}
		f.Do("GET", "/api/teams", nil, admin).Expect(t, 200).Into(t, &out)
		for _, x := range out.Teams {
			if x.Name == name {
				return &x
			}
		}
		return nil
	}
	members := func(id string) map[string]string {
		var out struct {
			Members []struct {
				Email string `json:"email"`
				Role  string `json:"role"`
			} `json:"members"`
		}
		f.Do("GET", "/api/teams/"+id+"/members", nil, admin).Expect(t, 200).Into(t, &out)
		m := map[string]string{}
		for _, x := range out.Members {
			m[x.Email] = x.Role
		}
		return m
	}
	inDialog := func(t *testing.T, text string) {
		t.Helper()
		if !eval[bool](p, `(() => { const b = [...document.querySelectorAll('dialog[open] button')].find((b) => norm(b.textContent) === `+js(text)+`); if (b) b.click(); return !!b })()`) {
			t.Fatalf("no %q button in the dialog", text)
		}
	}
	var support *team

	t.Run("created with a strategy; members added, the strategy changed, a member removed", func(t *testing.T) {
		p.in(t)
		p.click("link", "Teams")
		p.seeRole("heading", "Teams")
		p.see("Sales")
		p.click("button", "New team")
		p.fill("Name", "Sales")
		p.fill("Description", "Answers the shop's customers")
		p.choose("Assignment strategy", "Load balanced")
		p.see("the available member with the fewest open ones")
		p.axe("new team")
		inDialog(t, "Create team")
		p.waitUntil("the error next to the name", `(() => { const i = labelled('Name'); const d = i && i.getAttribute('aria-describedby'); return !!d && d.split(' ').some((id) => (document.getElementById(id)?.textContent || '').includes('a team with this name already exists')) })()`)
		p.fill("Name", "Support")
		inDialog(t, "Create team")
		p.see("Team Support created.")
		p.seeRole("heading", "Support")
		support = find("Support")
		if support == nil || support.AssignmentStrategy != "load_balanced" || support.Description != "Answers the shop's customers" {
			t.Fatalf("the created team: %+v", support)
		}

		p.choose("User", "User ann@wharf.test (ann@wharf.test)")
		p.click("button", "Add member")
		p.see("User ann@wharf.test added to the team.")
		p.choose("User", "User bob@wharf.test (bob@wharf.test)")
		p.choose("Team role", "Manager")
		p.waitUntil("Add member enabled", `!byRole('button', 'Add member').disabled`)
		p.click("button", "Add member")
		p.see("User bob@wharf.test added to the team.")
		p.see("Away")
		if m := members(support.ID); m["ann@wharf.test"] != "agent" || m["bob@wharf.test"] != "manager" {
			t.Fatalf("members %v", m)
		}

		p.choose("Assignment strategy", "Manual")
		p.click("button", "Save team")
		p.see("Team saved.")
		if s := find("Support"); s.AssignmentStrategy != "manual" {
			t.Fatalf("after saving the strategy is %s", s.AssignmentStrategy)
		}
		p.axe("team")

		// Carl comes and goes: removing asks first.
		carl := f.CreateUser(admin, "carl@wharf.test", "Agent")
		f.Do("POST", "/api/teams/"+support.ID+"/members", map[string]any{"user_id": carl.User.ID}, admin).Expect(t, 201)
		p.reload()
		p.click("button", "Remove carl@wharf.test from the team")
		p.seeRole("heading", "Remove this member?")
		p.click("button", "Keep the member")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Remove this member?')`)
		p.click("button", "Remove carl@wharf.test from the team")
		p.waitUntil("the dialog open", `!!byRole('heading', 'Remove this member?')`)
		inDialog(t, "Remove member")
		p.see("User carl@wharf.test removed from the team.")
		if m := members(support.ID); len(m) != 2 || m["carl@wharf.test"] != "" {
			t.Fatalf("members after the removal %v", m)
		}
		p.reload()
		p.see("User bob@wharf.test")
		p.shot("team")
		p.prefersDark(true)
		p.shot("team-dark")
		p.axe("team, dark")
		p.prefersDark(false)

		p.click("link", "← Teams")
		p.seeRole("link", "Support")
		p.see("Manual")
		p.shot("teams")
	})

	t.Run("an agent sees the team read-only, its manager may change it, a user without teams:read is refused", func(t *testing.T) {
		a := b.newPage(t, "agent")
		a.open("/console/")
		signIn(a, "ann@wharf.test", "password-123", "User ann@wharf.test")
		a.click("link", "Teams")
		a.seeRole("link", "Support")
		if a.has("link", "Sales") || a.has("button", "New team") {
			t.Fatal("an agent is shown another team, or New team")
		}
		a.click("link", "Support")
		a.seeRole("heading", "Support")
		a.see("User bob@wharf.test")
		for _, c := range []string{"Save team", "Delete team", "Add member", "Remove bob@wharf.test from the team"} {
			if a.has("button", c) {
				t.Fatalf("an agent is shown %q", c)
			}
		}
		if !eval[bool](a, `labelled('Name').matches(':disabled')`) {
			t.Fatal("an agent can type in the team's form")
		}
		a.axe("team read-only")
		a.shot("team-agent")

		// Bob manages the team (its manager, without teams:update): he may
		// change it and add agents, not make managers or delete it.
		m := b.newPage(t, "team-manager")
		m.open("/console/")
		signIn(m, "bob@wharf.test", "password-123", "User bob@wharf.test")
		m.open("/console/teams/" + support.ID)
		m.seeRole("button", "Save team")
		m.seeRole("button", "Remove ann@wharf.test from the team")
		m.waitUntil("the add-member form", `!!labelled('Team role')`)
		if m.has("button", "Delete team") || m.has("button", "Remove bob@wharf.test from the team") ||
			eval[bool](m, `[...labelled('Team role').options].some((o) => o.value === 'manager')`) {
			t.Fatal("a team manager is offered what takes teams:update or teams:delete")
		}
		m.fill("Description", "Answers the shop's customers, day and night")
		m.click("button", "Save team")
		m.see("Team saved.")
		if s := find("Support"); s.Description != "Answers the shop's customers, day and night" {
			t.Fatalf("the team manager's change: %+v", s)
		}

		f.Do("POST", "/api/roles", map[string]any{"name": "Campaigns only", "permissions": []string{"campaigns:read"}}, admin).Expect(t, 201)
		f.CreateUser(admin, "cora@wharf.test", "Campaigns only")
		c := b.newPage(t, "no-teams")
		c.open("/console/")
		signIn(c, "cora@wharf.test", "password-123", "User cora@wharf.test")
		c.seeRole("link", "Campaigns")
		if c.has("link", "Teams") {
			t.Fatal("a user without teams:read is shown Teams in the navigation")
		}
		c.open("/console/teams")
		c.seeRole("heading", "You cannot open this page")
		c.axe("teams refused")
	})

	t.Run("delete asks first", func(t *testing.T) {
		p.in(t)
		p.click("link", "Support")
		p.seeRole("heading", "Support")
		p.click("button", "Delete team")
		p.seeRole("heading", "Delete this team?")
		p.click("button", "Keep the team")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Delete this team?')`)
		p.click("button", "Delete team")
		p.waitUntil("the dialog open", `!!byRole('heading', 'Delete this team?')`)
		inDialog(t, "Delete team")
		p.see("Team Support deleted.")
		apptest.Eventually(t, 5*time.Second, "the row gone", func() bool { return !p.has("link", "Support") })
		if find("Support") != nil {
			t.Fatal("the deleted team is still listed")
		}
		f.Do("GET", "/api/teams/"+support.ID+"/members", nil, admin).Expect(t, 404)
	})
}
