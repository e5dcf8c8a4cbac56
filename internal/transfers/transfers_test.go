package transfers_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/contacts"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/safehttp"
	"wharf/internal/teams"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/transfers"
	"wharf/internal/webhooks"
	"wharf/models"
)

type bundle struct {
	f     *testfactory.Factory
	org   *testfactory.Org
	teams *teams.Service
	admin teams.Caller
}

// setup builds the transfers domain with the real outbox, and a webhook of
// the organization listening to the transfer events (so they are written).
func setup(t *testing.T) (*transfers.Service, *bundle) {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	q := testenv.NewQueue(t)
	wh := webhooks.NewService(f.DB, f.Box, q.Enqueuer, safehttp.Policy{}, nil, testenv.Quiet())
	org := f.Org()
	hook := models.Webhook{OrganizationID: org.ID, Name: "CRM", URL: "https://crm.example.test/hook", IsActive: true}
	hook.Events.V = []string{webhooks.EventTransferCreated, webhooks.EventTransferAssigned, webhooks.EventTransferResumed}
	hook.Headers.V = map[string]string{}
	if err := f.DB.Create(&hook).Error; err != nil {
		t.Fatal(err)
	}
	admin := f.User(org, identity.RoleAdmin)
	ids := identity.NewService(f.DB, nil, nil, testenv.Quiet())
	ts := teams.NewService(f.DB, ids)
	s := transfers.NewService(transfers.Deps{DB: f.DB, Events: wh, Contacts: contacts.NewService(f.DB, wh, nil, ids), People: ids, Teams: ts})
	return s, &bundle{f: f, org: org, teams: ts, admin: teams.Caller{UserID: admin.ID, ManageAll: true}}
}

// team creates a team with n available agents and returns it with their ids.
func (b *bundle) team(t *testing.T, strategy string, n int) (uuid.UUID, []uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	name := "Team " + uuid.NewString()[:8]
	v, err := b.teams.Create(ctx, b.org.ID, teams.Input{Name: &name, AssignmentStrategy: &strategy})
	if err != nil {
		t.Fatal(err)
	}
	var agents []uuid.UUID
	for range n {
		u := b.f.User(b.org, identity.RoleAgent)
		if _, err := b.teams.AddMember(ctx, b.org.ID, b.admin, v.ID, u.ID, "agent"); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, u.ID)
	}
	return v.ID, agents
}

func (b *bundle) events(t *testing.T, name string) []transfers.EventData {
	t.Helper()
	var rows []models.Event
	if err := b.f.DB.Order("created_at, id").Find(&rows, "organization_id = ? AND event = ?", b.org.ID, name).Error; err != nil {
		t.Fatal(err)
	}
	out := make([]transfers.EventData, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal(r.Data, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A contact has one active transfer: asking again answers it; once
// resumed, a new one can be made. Each change writes its event once.
func TestOneActiveTransferPerContact(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	c := b.f.Contact(b.org.ID, nil, func(c *models.Contact) { c.Name, c.PhoneNumber = "Ann", "+15551230000" })
	first, created, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: c.ID, Notes: "wants a refund"})
	if err != nil || !created || first.Status != "active" || first.TeamID != nil || first.AgentID != nil || first.Source != "manual" {
		t.Fatalf("create: %+v, %v, %v", first, created, err)
	}
	again, created, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: c.ID})
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("second request: %+v, created %v, %v; want the first", again, created, err)
	}
	ev := b.events(t, webhooks.EventTransferCreated)
	if len(ev) != 1 || ev[0].TransferID != first.ID || ev[0].ContactPhone != "+15551230000" || ev[0].ContactName != "Ann" ||
		ev[0].Source != "manual" || ev[0].AgentID != nil {
		t.Fatalf("transfer.created events %+v", ev)
	}
	if _, err := s.Resume(ctx, b.org.ID, transfers.Caller{UserID: b.admin.UserID, CanAssign: true}, first.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Resume(ctx, b.org.ID, transfers.Caller{UserID: b.admin.UserID, CanAssign: true}, first.ID)
	testfactory.WantError(t, err, apperr.Conflict, "not active")
	if len(b.events(t, webhooks.EventTransferResumed)) != 1 {
		t.Fatal("want one transfer.resumed")
	}
	next, created, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: c.ID})
	if err != nil || !created || next.ID == first.ID {
		t.Fatalf("after resume: %+v, %v, %v", next, created, err)
	}

	other := b.f.Org()
	_, _, err = s.Create(ctx, other.ID, transfers.CreateInput{ContactID: c.ID})
	testfactory.WantError(t, err, apperr.NotFound, "contact not found")
	_, err = s.Resume(ctx, other.ID, transfers.Caller{CanAssign: true}, next.ID)
	testfactory.WantError(t, err, apperr.NotFound, "transfer not found")
	otherTeam, _ := teams.NewService(b.f.DB, identity.NewService(b.f.DB, nil, nil, testenv.Quiet())).Create(ctx, other.ID, teams.Input{Name: ptr("Theirs")})
	_, _, err = s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: b.f.Contact(b.org.ID, nil).ID, TeamID: &otherTeam.ID})
	testfactory.WantError(t, err, apperr.NotFound, "team not found")
}

func ptr(s string) *string { return &s }

// Ten agents picking up at once get ten different transfers, oldest first;
// the eleventh finds the queue empty.
func TestConcurrentPickupsNeverShareATransfer(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	const n = 10
	for range n {
		if _, _, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: b.f.Contact(b.org.ID, nil).ID}); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]uuid.UUID, n)
	var wg sync.WaitGroup
	for i := range n {
		agent := b.f.User(b.org, identity.RoleAgent)
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.Pickup(ctx, b.org.ID, transfers.Caller{UserID: agent.ID}, "general")
			if err != nil {
				t.Error(err)
				return
			}
			if v.AgentID == nil || *v.AgentID != agent.ID {
				t.Errorf("picked %+v for %s", v, agent.ID)
			}
			got[i] = v.ID
		}()
	}
	wg.Wait()
	seen := map[uuid.UUID]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("transfer %s picked up twice", id)
		}
		seen[id] = true
	}
	_, err := s.Pickup(ctx, b.org.ID, transfers.Caller{UserID: b.admin.UserID}, "")
	testfactory.WantError(t, err, apperr.NotFound, "no transfer is waiting in this queue")
	if len(b.events(t, webhooks.EventTransferAssigned)) != n {
		t.Fatal("want one transfer.assigned per pickup")
	}
}

// Fifty transfers created at once to a load-balanced team of five end
// five agents with ten each.
func TestLoadBalancedTeamSharesConcurrentTransfers(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	team, agents := b.team(t, "load_balanced", 5)
	contacts := make([]uuid.UUID, 50)
	for i := range contacts {
		contacts[i] = b.f.Contact(b.org.ID, nil).ID
	}
	var wg sync.WaitGroup
	for _, c := range contacts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: c, TeamID: &team}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	counts := map[uuid.UUID]int64{}
	for _, a := range agents {
		counts[a] = b.f.Count("agent_transfers", "agent_id = ? AND status = 'active'", a)
	}
	lo, hi := int64(1<<62), int64(0)
	for _, n := range counts {
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > 1 || lo == 0 {
		t.Fatalf("active transfers per agent %v: want within one of each other", counts)
	}
	if n := b.f.Count("agent_transfers", "agent_id IS NULL"); n != 0 {
		t.Fatalf("%d transfers left unassigned", n)
	}
}

// Round robin takes turns among the available, active members; manual
// leaves the transfer in the team's queue.
func TestRoundRobinAndManual(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	team, agents := b.team(t, "round_robin", 3)
	if err := b.f.DB.Exec("UPDATE users SET is_available = false WHERE id = ?", agents[2]).Error; err != nil {
		t.Fatal(err)
	}
	var order []uuid.UUID
	for range 4 {
		v, _, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: b.f.Contact(b.org.ID, nil).ID, TeamID: &team, Source: transfers.SourceFlow})
		if err != nil || v.AgentID == nil {
			t.Fatalf("create: %+v, %v", v, err)
		}
		order = append(order, *v.AgentID)
	}
	if order[0] == order[1] || order[0] != order[2] || order[1] != order[3] || order[0] == agents[2] || order[1] == agents[2] {
		t.Fatalf("turns %v with agents %v (the third unavailable)", order, agents)
	}
	ev := b.events(t, webhooks.EventTransferAssigned)
	if len(ev) != 4 || ev[0].AgentID == nil || ev[0].AgentName == "" || ev[0].Source != "flow" {
		t.Fatalf("transfer.assigned events %+v", ev)
	}

	manual, agentsManual := b.team(t, "manual", 1)
	v, _, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: b.f.Contact(b.org.ID, nil).ID, TeamID: &manual})
	if err != nil || v.AgentID != nil {
		t.Fatalf("manual team: %+v, %v; want it waiting in the queue", v, err)
	}
	page, err := s.List(ctx, b.org.ID, transfers.Caller{UserID: agentsManual[0]}, transfers.Filter{Status: "active"}, pageAll)
	if err != nil || page.TeamQueueCounts[manual] != 1 || page.GeneralQueueCount != 0 {
		t.Fatalf("queues seen by the manual team's agent: %+v, %v", page, err)
	}
	picked, err := s.Pickup(ctx, b.org.ID, transfers.Caller{UserID: agentsManual[0]}, manual.String())
	if err != nil || picked.ID != v.ID {
		t.Fatalf("pickup from the team queue: %+v, %v", picked, err)
	}
}

// Agents pick up from their own teams' queues and resume their own
// transfers; assigning and resuming others' takes transfers:assign; an
// agent sees (and may resume) the general queue, their teams' and their
// own transfers.
func TestAgentsRights(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	team, members := b.team(t, "manual", 2)
	outsider := b.f.User(b.org, identity.RoleAgent).ID
	v, _, err := s.Create(ctx, b.org.ID, transfers.CreateInput{ContactID: b.f.Contact(b.org.ID, nil).ID, TeamID: &team})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Pickup(ctx, b.org.ID, transfers.Caller{UserID: outsider}, team.String())
	testfactory.WantError(t, err, apperr.Forbidden, "not a member of this team")
	if page, _ := s.List(ctx, b.org.ID, transfers.Caller{UserID: outsider}, transfers.Filter{}, pageAll); page.Total != 0 || page.TeamQueueCounts[team] != 0 {
		t.Fatalf("an outsider sees %+v", page)
	}
	_, err = s.GetFor(ctx, b.org.ID, transfers.Caller{UserID: outsider}, v.ID)
	testfactory.WantError(t, err, apperr.NotFound, "transfer not found")

	_, err = s.Assign(ctx, b.org.ID, v.ID, b.f.User(b.f.Org(), identity.RoleAgent).ID)
	testfactory.WantError(t, err, apperr.Invalid, "not an active member of this organization")
	if _, err := s.Assign(ctx, b.org.ID, v.ID, members[0]); err != nil {
		t.Fatal(err)
	}
	// Outside the team it is not seen, so not resumed either (404, as
	// GetFor); a teammate sees it but it is another agent's (403).
	_, err = s.Resume(ctx, b.org.ID, transfers.Caller{UserID: outsider}, v.ID)
	testfactory.WantError(t, err, apperr.NotFound, "transfer not found")
	_, err = s.Resume(ctx, b.org.ID, transfers.Caller{UserID: members[1]}, v.ID)
	testfactory.WantError(t, err, apperr.Forbidden, "only the assigned agent or a manager")
	if still, _ := s.Get(ctx, b.org.ID, v.ID); still.Status != models.TransferActive {
		t.Fatalf("a refused resume changed the transfer: %+v", still)
	}
	if _, err := s.Resume(ctx, b.org.ID, transfers.Caller{UserID: members[0]}, v.ID); err != nil {
		t.Fatalf("the assigned agent resumes: %v", err)
	}
	_, err = s.Assign(ctx, b.org.ID, v.ID, members[0])
	testfactory.WantError(t, err, apperr.Conflict, "not active")
}

var pageAll = paging.Params{Page: 1, Limit: 200}
