package e2e_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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

// Agent transfers through the router: an agent hands a contact over (201,
// then the same transfer with 200), picks it up from the queue, and a
// manager assigns; an agent cannot assign; the receiver gets
// transfer.created, transfer.assigned and transfer.resumed with the
// contact's number and the agent.
func TestAgentTransfersThroughTheRouter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()
	rcv := apptest.NewReceiver(t)
	f.Do("POST", "/api/webhooks", map[string]any{"name": "CRM", "url": rcv.URL,
		"events": []string{"transfer.created", "transfer.assigned", "transfer.resumed"}}, f.admin.Auth()).Expect(t, 201)
	manager := f.CreateUser(f.admin.Auth(), "lead@example.test", "Manager")
	agent := f.CreateUser(f.admin.Auth(), "agent@example.test", "Agent")
	var contact struct{ ID string }
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550107777", "name": "Ann"}, agent.Auth()).Expect(t, 201).Into(t, &contact)

	type transfer struct {
		ID          string  `json:"id"`
		Status      string  `json:"status"`
		AgentID     *string `json:"agent_id"`
		AgentName   string  `json:"agent_name"`
		PhoneNumber string  `json:"phone_number"`
	}
	var tr, again transfer
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact.ID, "notes": "refund"}, agent.Auth()).Expect(t, 201).Into(t, &tr)
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact.ID}, agent.Auth()).Expect(t, 200).Into(t, &again)
	if again.ID != tr.ID || tr.Status != "active" || tr.AgentID != nil || tr.PhoneNumber != "+15550107777" {
		t.Fatalf("transfers %+v, %+v", tr, again)
	}
	f.Do("POST", "/api/chatbot/transfers", map[string]any{}, agent.Auth()).Expect(t, 400)
	var list struct {
		Transfers         []transfer     `json:"transfers"`
		GeneralQueueCount int            `json:"general_queue_count"`
		TeamQueueCounts   map[string]int `json:"team_queue_counts"`
	}
	f.Do("GET", "/api/chatbot/transfers?status=active&team_id=general", nil, agent.Auth()).Expect(t, 200).Into(t, &list)
	if len(list.Transfers) != 1 || list.GeneralQueueCount != 1 || list.TeamQueueCounts == nil {
		t.Fatalf("list %+v", list)
	}
	var picked transfer
	f.Do("POST", "/api/chatbot/transfers/pickup?team_id=general", nil, agent.Auth()).Expect(t, 200).Into(t, &picked)
	if picked.ID != tr.ID || picked.AgentID == nil || *picked.AgentID != agent.User.ID {
		t.Fatalf("picked %+v", picked)
	}
	if r := f.Do("POST", "/api/chatbot/transfers/pickup", nil, agent.Auth()).Expect(t, 404); r.Message != "no transfer is waiting in this queue" {
		t.Fatalf("empty queue: %q", r.Message)
	}
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/assign", map[string]any{"agent_id": manager.User.ID}, agent.Auth()).Expect(t, 403)
	var assigned transfer
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/assign", map[string]any{"agent_id": manager.User.ID}, manager.Auth()).Expect(t, 200).Into(t, &assigned)
	if assigned.AgentID == nil || *assigned.AgentID != manager.User.ID {
		t.Fatalf("assigned %+v", assigned)
	}
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, agent.Auth()).Expect(t, 403) // no longer theirs
	var resumed transfer
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, manager.Auth()).Expect(t, 200).Into(t, &resumed)
	if resumed.Status != "resumed" {
		t.Fatalf("resumed %+v", resumed)
	}
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, manager.Auth()).Expect(t, 409)

	apptest.Eventually(t, 15*time.Second, "four transfer events", func() bool { return len(rcv.Got()) >= 4 })
	var names []string
	for _, r := range rcv.Got() {
		var ev struct {
			Event string `json:"event"`
			Data  struct {
				TransferID   string `json:"transfer_id"`
				ContactPhone string `json:"contact_phone"`
				AgentName    string `json:"agent_name"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Data.TransferID != tr.ID || ev.Data.ContactPhone != "+15550107777" {
			t.Fatalf("event %s", r.Body)
		}
		if ev.Event == "transfer.assigned" && ev.Data.AgentName == "" {
			t.Fatalf("assigned without the agent: %s", r.Body)
		}
		names = append(names, ev.Event)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"transfer.assigned", "transfer.assigned", "transfer.created", "transfer.resumed"}) {
		t.Fatalf("events %v", names)
	}
}

// Through the router, concurrently: ten agents picking up at once never
// share a transfer, and fifty transfers created at once for a
// load-balanced team of five end ten per agent.
func TestConcurrentPickupsAndLoadBalancingThroughTheRouter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	a := f.admin.Auth()
	contact := func(i int) string {
		var c struct{ ID string }
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": fmt.Sprintf("+1555012%04d", i)}, a).Expect(t, 201).Into(t, &c)
		return c.ID
	}
	for i := range 10 {
		f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact(i)}, a).Expect(t, 201)
	}
	agents := make([]apptest.Session, 10)
	for i := range agents {
		agents[i] = f.CreateUser(a, fmt.Sprintf("picker%d@example.test", i), "Agent")
	}
	picked := make([]string, len(agents))
	var wg sync.WaitGroup
	for i, ag := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tr struct{ ID string }
			f.Do("POST", "/api/chatbot/transfers/pickup", nil, ag.Auth()).Expect(t, 200).Into(t, &tr)
			picked[i] = tr.ID
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range picked {
		if id == "" || seen[id] {
			t.Fatalf("pickups %v: a transfer was given twice", picked)
		}
		seen[id] = true
	}

	var team struct{ ID string }
	f.Do("POST", "/api/teams", map[string]any{"name": "Balanced", "assignment_strategy": "load_balanced"}, a).Expect(t, 201).Into(t, &team)
	for i := range 5 {
		f.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": agents[i].User.ID}, a).Expect(t, 201)
	}
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = contact(100 + i)
	}
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": id, "team_id": team.ID}, a).Expect(t, 201)
		}()
	}
	wg.Wait()
	var list struct {
		Transfers []struct {
			AgentID *string `json:"agent_id"`
			TeamID  *string `json:"team_id"`
		} `json:"transfers"`
	}
	f.Do("GET", "/api/chatbot/transfers?team_id="+team.ID+"&limit=200", nil, a).Expect(t, 200).Into(t, &list)
	per := map[string]int{}
	for _, tr := range list.Transfers {
		if tr.AgentID == nil {
			t.Fatal("a transfer of the balanced team is unassigned")
		}
		per[*tr.AgentID]++
	}
	if len(list.Transfers) != 50 || len(per) != 5 {
		t.Fatalf("%d transfers over %d agents", len(list.Transfers), len(per))
	}
	for agent, n := range per {
		if n != 10 {
			t.Fatalf("agent %s has %d transfers: %v", agent, n, per)
		}
	}
}

// A team's transfer stays in its team: an agent outside it who asks for a
// transfer of the same contact learns only that one exists (409, nothing
// of its team, agent or notes), and cannot resume it (404, as for reading
// it); a member resumes it, and so does a holder of transfers:assign. The
// refusals change nothing.
func TestAgentTransfersStayInTheirTeam(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	member := f.CreateUser(admin, "member@example.test", "Agent")
	outsider := f.CreateUser(admin, "outsider@example.test", "Agent")
	manager := f.CreateUser(admin, "lead@example.test", "Manager")
	var team struct{ ID string }
	f.Do("POST", "/api/teams", map[string]any{"name": "Billing", "assignment_strategy": "manual"}, admin).Expect(t, 201).Into(t, &team)
	f.Do("POST", "/api/teams/"+team.ID+"/members", map[string]any{"user_id": member.User.ID, "role": "agent"}, admin).Expect(t, 201)
	newContact := func(phone string) string {
		var c struct{ ID string }
		f.Do("POST", "/api/contacts", map[string]any{"phone_number": phone, "name": "Ann"}, admin).Expect(t, 201).Into(t, &c)
		return c.ID
	}
	type transfer struct {
		ID     string  `json:"id"`
		Status string  `json:"status"`
		TeamID *string `json:"team_id"`
		Notes  string  `json:"notes"`
	}
	active := func(id string) transfer {
		var tr transfer
		f.Do("GET", "/api/chatbot/transfers/"+id, nil, admin).Expect(t, 200).Into(t, &tr)
		return tr
	}

	contact := newContact("+15550108881")
	var tr transfer
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact, "team_id": team.ID, "notes": "disputed invoice 4411"},
		member.Auth()).Expect(t, 201).Into(t, &tr)

	// Another transfer of the same contact, asked by someone outside the
	// team: a 409 that names nothing of the existing one.
	r := f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact, "notes": "me too"}, outsider.Auth()).Expect(t, 409)
	if r.Message != "this contact already has an active transfer" {
		t.Errorf("outsider's create: %q", r.Message)
	}
	for _, leak := range []string{tr.ID, team.ID, "disputed", "Billing"} {
		if strings.Contains(string(r.Body), leak) {
			t.Errorf("the refusal reveals %q: %s", leak, r.Body)
		}
	}
	// The member and a manager get the existing transfer, as before.
	var again transfer
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact}, member.Auth()).Expect(t, 200).Into(t, &again)
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contact}, manager.Auth()).Expect(t, 200)
	if again.ID != tr.ID || again.Notes != "disputed invoice 4411" {
		t.Fatalf("member's create: %+v", again)
	}

	// Resume: the outsider gets what reading it gets, a 404, and the
	// transfer stays active.
	f.Do("GET", "/api/chatbot/transfers/"+tr.ID, nil, outsider.Auth()).Expect(t, 404)
	if r := f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, outsider.Auth()).Expect(t, 404); r.Message != "transfer not found" {
		t.Errorf("outsider's resume: %q", r.Message)
	}
	if got := active(tr.ID); got.Status != "active" {
		t.Fatalf("after the outsider's resume: %+v", got)
	}
	var resumed transfer
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, member.Auth()).Expect(t, 200).Into(t, &resumed)
	if resumed.Status != "resumed" {
		t.Fatalf("member's resume: %+v", resumed)
	}

	// A supervisor (transfers:assign) resumes any team's transfer; the
	// general queue's is everyone's.
	other := newContact("+15550108882")
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": other, "team_id": team.ID}, admin).Expect(t, 201).Into(t, &tr)
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, outsider.Auth()).Expect(t, 404)
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, manager.Auth()).Expect(t, 200)
	general := newContact("+15550108883")
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": general}, member.Auth()).Expect(t, 201).Into(t, &tr)
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": general}, outsider.Auth()).Expect(t, 200)
	f.Do("PUT", "/api/chatbot/transfers/"+tr.ID+"/resume", nil, outsider.Auth()).Expect(t, 200)
}
