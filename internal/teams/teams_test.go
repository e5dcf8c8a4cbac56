package teams_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/teams"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

func str(s string) *string { return &s }

type bundle struct {
	f     *testfactory.Factory
	org   *testfactory.Org
	admin teams.Caller
}

func setup(t *testing.T) (*teams.Service, *bundle) {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	admin := f.User(org, identity.RoleAdmin)
	return teams.NewService(f.DB, identity.NewService(f.DB, nil, nil, testenv.Quiet())), &bundle{f: f, org: org, admin: teams.Caller{UserID: admin.ID, ManageAll: true}}
}

func (b *bundle) caller(role string) teams.Caller {
	return teams.Caller{UserID: b.f.User(b.org, role).ID}
}

func TestCreateValidates(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	_, err := s.Create(ctx, b.org.ID, teams.Input{})
	testfactory.WantError(t, err, apperr.Invalid, "name is required")
	_, err = s.Create(ctx, b.org.ID, teams.Input{Name: str("Sales"), AssignmentStrategy: str("random")})
	testfactory.WantError(t, err, apperr.Invalid, "assignment_strategy must be one of")
	v, err := s.Create(ctx, b.org.ID, teams.Input{Name: str("Sales")})
	if err != nil || v.AssignmentStrategy != "round_robin" || !v.IsActive {
		t.Fatalf("create: %+v, %v", v, err)
	}
	_, err = s.Create(ctx, b.org.ID, teams.Input{Name: str("sales")})
	testfactory.WantError(t, err, apperr.Conflict, "a team with this name already exists")
	if _, err := s.Create(ctx, b.f.Org().ID, teams.Input{Name: str("Sales")}); err != nil {
		t.Fatalf("another organization's team of the same name: %v", err)
	}
}

// Who sees and changes a team: teams:update reaches every team; a team
// manager changes their team and its agents, but cannot make or remove a
// manager; an agent of the team sees it and changes nothing; others do not
// see it at all.
func TestTeamRights(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	team, err := s.Create(ctx, b.org.ID, teams.Input{Name: str("Support")})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := s.Create(ctx, b.org.ID, teams.Input{Name: str("Billing")})
	lead, agent, outsider, newcomer := b.caller(identity.RoleManager), b.caller(identity.RoleAgent), b.caller(identity.RoleAgent), b.caller(identity.RoleAgent)
	if _, err := s.AddMember(ctx, b.org.ID, b.admin, team.ID, lead.UserID, "manager"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMember(ctx, b.org.ID, lead, team.ID, agent.UserID, "agent"); err != nil {
		t.Fatalf("the team's manager adds an agent: %v", err)
	}

	if rows, _ := s.List(ctx, b.org.ID, b.admin); len(rows) != 2 {
		t.Fatalf("teams:update sees %d teams, want 2", len(rows))
	}
	for who, c := range map[string]teams.Caller{"manager": lead, "agent": agent} {
		rows, err := s.List(ctx, b.org.ID, c)
		if err != nil || len(rows) != 1 || rows[0].ID != team.ID || rows[0].MemberCount != 2 {
			t.Fatalf("%s sees %+v, %v; want only their team with 2 members", who, rows, err)
		}
	}
	if rows, _ := s.List(ctx, b.org.ID, outsider); len(rows) != 0 {
		t.Fatalf("an outsider sees %d teams", len(rows))
	}
	_, err = s.Get(ctx, b.org.ID, outsider, team.ID)
	testfactory.WantError(t, err, apperr.NotFound, "team not found")
	_, err = s.Members(ctx, b.org.ID, outsider, team.ID)
	testfactory.WantError(t, err, apperr.NotFound, "team not found")

	if _, err := s.Update(ctx, b.org.ID, lead, team.ID, teams.Input{AssignmentStrategy: str("load_balanced")}); err != nil {
		t.Fatalf("the team's manager updates it: %v", err)
	}
	_, err = s.Update(ctx, b.org.ID, lead, other.ID, teams.Input{Name: str("Mine")})
	testfactory.WantError(t, err, apperr.NotFound, "team not found")
	_, err = s.Update(ctx, b.org.ID, agent, team.ID, teams.Input{Name: str("Mine")})
	testfactory.WantError(t, err, apperr.Forbidden, "only an admin or this team's manager")
	_, err = s.AddMember(ctx, b.org.ID, agent, team.ID, newcomer.UserID, "agent")
	testfactory.WantError(t, err, apperr.Forbidden, "only an admin or this team's manager")

	_, err = s.AddMember(ctx, b.org.ID, lead, team.ID, newcomer.UserID, "manager")
	testfactory.WantError(t, err, apperr.Forbidden, "only an admin can make a team manager")
	peer := b.caller(identity.RoleManager)
	if _, err := s.AddMember(ctx, b.org.ID, b.admin, team.ID, peer.UserID, "manager"); err != nil {
		t.Fatal(err)
	}
	testfactory.WantError(t, s.RemoveMember(ctx, b.org.ID, lead, team.ID, peer.UserID), apperr.Forbidden, "only an admin can remove a team manager")
	if err := s.RemoveMember(ctx, b.org.ID, lead, team.ID, agent.UserID); err != nil {
		t.Fatalf("the team's manager removes an agent: %v", err)
	}
	testfactory.WantError(t, s.RemoveMember(ctx, b.org.ID, lead, team.ID, agent.UserID), apperr.NotFound, "team member not found")
	if err := s.RemoveMember(ctx, b.org.ID, b.admin, team.ID, peer.UserID); err != nil {
		t.Fatal(err)
	}
}

// Only members of the organization join its teams, once; leaving the
// organization takes them out of its teams; another organization's team
// is not found.
func TestMembersBelongToTheOrganization(t *testing.T) {
	t.Parallel()
	s, b := setup(t)
	ctx := context.Background()
	team, _ := s.Create(ctx, b.org.ID, teams.Input{Name: str("Support")})
	otherOrg := b.f.Org()
	stranger := b.f.User(otherOrg, identity.RoleAgent)
	_, err := s.AddMember(ctx, b.org.ID, b.admin, team.ID, stranger.ID, "agent")
	testfactory.WantError(t, err, apperr.Invalid, "not a member of this organization")
	_, err = s.AddMember(ctx, b.org.ID, b.admin, team.ID, uuid.New(), "agent")
	testfactory.WantError(t, err, apperr.Invalid, "not a member of this organization")
	_, err = s.AddMember(ctx, b.org.ID, b.admin, team.ID, stranger.ID, "boss")
	testfactory.WantError(t, err, apperr.Invalid, "role must be manager or agent")

	agent := b.f.User(b.org, identity.RoleAgent)
	m, err := s.AddMember(ctx, b.org.ID, b.admin, team.ID, agent.ID, "")
	if err != nil || m.Role != "agent" || m.Email != agent.Email || !m.IsAvailable {
		t.Fatalf("add: %+v, %v", m, err)
	}
	_, err = s.AddMember(ctx, b.org.ID, b.admin, team.ID, agent.ID, "agent")
	testfactory.WantError(t, err, apperr.Conflict, "already a member of this team")

	_, err = s.Get(ctx, otherOrg.ID, teams.Caller{ManageAll: true}, team.ID)
	testfactory.WantError(t, err, apperr.NotFound, "team not found")
	testfactory.WantError(t, s.Delete(ctx, otherOrg.ID, team.ID), apperr.NotFound, "team not found")

	if err := b.f.DB.Delete(&models.OrganizationMember{}, "organization_id = ? AND user_id = ?", b.org.ID, agent.ID).Error; err != nil {
		t.Fatal(err)
	}
	if n := b.f.Count("team_members", "team_id = ?", team.ID); n != 0 {
		t.Fatalf("%d team members after the only one left the organization", n)
	}
	if err := s.Delete(ctx, b.org.ID, team.ID); err != nil {
		t.Fatal(err)
	}
}
