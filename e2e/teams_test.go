package e2e_test

import (
	"strings"
	"testing"

	"wharf/internal/apptest"
)

// The spec's role matrix through the router: Admin and Manager manage
// canned responses, an Agent lists and uses them; only the Admin creates
// and deletes teams; a team is changed by the Admin or its manager, and an
// Agent sees only the teams they are in.
func TestTeamsAndCannedResponsesRoleMatrix(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	admin := e.Admin()
	manager := e.CreateUser(admin.Auth(), "manager@example.test", "Manager")
	agent := e.CreateUser(admin.Auth(), "agent@example.test", "Agent")
	other := e.CreateUser(admin.Auth(), "other@example.test", "Agent")

	// Canned responses.
	e.Do("POST", "/api/canned-responses", map[string]any{"name": "Hi", "content": "x"}, agent.Auth()).Expect(t, 403)
	if r := e.Do("POST", "/api/canned-responses", map[string]any{"name": "Hi"}, manager.Auth()).Expect(t, 400); r.Message != "name and content are required" {
		t.Fatalf("missing content: %q", r.Message)
	}
	var cr struct {
		ID         string `json:"id"`
		IsActive   bool   `json:"is_active"`
		UsageCount int    `json:"usage_count"`
	}
	e.Do("POST", "/api/canned-responses", map[string]any{"name": "Greeting", "content": "Hello {{contact_name}}", "shortcut": "/hello",
		"category": "greeting"}, manager.Auth()).Expect(t, 201).Into(t, &cr)
	if !cr.IsActive || cr.UsageCount != 0 {
		t.Fatalf("created %+v", cr)
	}
	if r := e.Do("POST", "/api/canned-responses", map[string]any{"name": "greeting", "content": "y"}, admin.Auth()).Expect(t, 409); r.Message != "Canned response with this name already exists" {
		t.Fatalf("duplicate: %q", r.Message)
	}
	var list struct {
		CannedResponses []struct{ ID string } `json:"canned_responses"`
	}
	e.Do("GET", "/api/canned-responses?search=HELLO&active_only=true", nil, agent.Auth()).Expect(t, 200).Into(t, &list)
	if len(list.CannedResponses) != 1 {
		t.Fatalf("agent's search: %+v", list)
	}
	var used struct {
		Content    string `json:"content"`
		UsageCount int    `json:"usage_count"`
	}
	e.Do("POST", "/api/canned-responses/"+cr.ID+"/use", nil, agent.Auth()).Expect(t, 200).Into(t, &used)
	if used.UsageCount != 1 || used.Content != "Hello {{contact_name}}" {
		t.Fatalf("use without a contact: %+v", used)
	}
	e.Do("PUT", "/api/canned-responses/"+cr.ID, map[string]any{"content": "changed"}, agent.Auth()).Expect(t, 403)
	e.Do("DELETE", "/api/canned-responses/"+cr.ID, nil, agent.Auth()).Expect(t, 403)
	if r := e.Do("GET", "/api/canned-responses/00000000-0000-0000-0000-000000000001", nil, agent.Auth()).Expect(t, 404); r.Message != "Canned response not found" {
		t.Fatalf("unknown: %q", r.Message)
	}
	e.Do("DELETE", "/api/canned-responses/"+cr.ID, nil, manager.Auth()).Expect(t, 200)

	// Teams.
	e.Do("POST", "/api/teams", map[string]any{"name": "Support"}, manager.Auth()).Expect(t, 403)
	var team struct {
		ID                 string `json:"id"`
		AssignmentStrategy string `json:"assignment_strategy"`
		MemberCount        int    `json:"member_count"`
	}
	e.Do("POST", "/api/teams", map[string]any{"name": "Support", "description": "First line"}, admin.Auth()).Expect(t, 201).Into(t, &team)
	if team.AssignmentStrategy != "round_robin" {
		t.Fatalf("team %+v", team)
	}
	e.Do("PUT", "/api/teams/"+team.ID, map[string]any{"name": "Mine"}, manager.Auth()).Expect(t, 404) // not theirs: not shown
	e.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": manager.User.ID, "role": "manager"}, admin.Auth()).Expect(t, 201)
	e.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": agent.User.ID, "role": "agent"}, manager.Auth()).Expect(t, 201)
	e.Do("PUT", "/api/teams/"+team.ID, map[string]any{"assignment_strategy": "load_balanced"}, manager.Auth()).Expect(t, 200)
	if r := e.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": other.User.ID, "role": "manager"}, manager.Auth()).Expect(t, 403); !strings.Contains(r.Message, "only an admin can make a team manager") {
		t.Fatalf("manager making a manager: %q", r.Message)
	}
	e.Do("PUT", "/api/teams/"+team.ID, map[string]any{"name": "Mine"}, agent.Auth()).Expect(t, 403)
	e.Do("DELETE", "/api/teams/"+team.ID, nil, manager.Auth()).Expect(t, 403)

	var teams struct {
		Teams []struct {
			ID          string `json:"id"`
			MemberCount int    `json:"member_count"`
		} `json:"teams"`
	}
	e.Do("GET", "/api/teams", nil, agent.Auth()).Expect(t, 200).Into(t, &teams)
	if len(teams.Teams) != 1 || teams.Teams[0].MemberCount != 2 {
		t.Fatalf("agent's teams: %+v", teams)
	}
	e.Do("GET", "/api/teams", nil, other.Auth()).Expect(t, 200).Into(t, &teams)
	if len(teams.Teams) != 0 {
		t.Fatalf("an agent outside the team sees %+v", teams)
	}
	var members struct {
		Members []struct {
			UserID string `json:"user_id"`
			Role   string `json:"role"`
		} `json:"members"`
	}
	e.Do("GET", "/api/teams/"+team.ID+"/members", nil, agent.Auth()).Expect(t, 200).Into(t, &members)
	if len(members.Members) != 2 || members.Members[0].Role != "manager" {
		t.Fatalf("members: %+v", members)
	}
	e.Do("DELETE", "/api/teams/"+team.ID+"/members/"+agent.User.ID, nil, manager.Auth()).Expect(t, 200)
	e.Do("DELETE", "/api/teams/"+team.ID, nil, admin.Auth()).Expect(t, 200)
}
