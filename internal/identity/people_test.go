package identity_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/identity"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// The membership reads other domains make stay inside the organization
// they are given: another organization's user is no member, a
// cross-organization member is, and an inactive one is no active member.
// Users reads the users of the ids it is given (ids read from the
// organization's own rows), a former member's too.
func TestPeopleReadsStayInTheOrganization(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	s := identity.NewService(f.DB, nil, nil, testenv.Quiet())
	ctx := context.Background()
	org, other := f.Org(), f.Org()
	ann := f.User(org, identity.RoleAgent)
	idle := f.User(org, identity.RoleAgent, func(u *models.User) { u.IsActive = false })
	stranger := f.User(other, identity.RoleAgent)
	guest := f.User(other, identity.RoleAgent)
	if err := f.DB.Create(&models.OrganizationMember{ID: uuid.New(), OrganizationID: org.ID, UserID: guest.ID,
		RoleID: org.Roles[identity.RoleAgent]}).Error; err != nil {
		t.Fatal(err)
	}

	users, err := s.Users(ctx, f.DB, org.ID, []uuid.UUID{ann.ID, idle.ID, stranger.ID, guest.ID, uuid.New()})
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 4 || users[ann.ID].FullName != ann.FullName || users[guest.ID].Email != guest.Email || users[idle.ID].IsActive ||
		users[stranger.ID].FullName != stranger.FullName {
		t.Fatalf("users %+v", users)
	}
	for _, c := range []struct {
		user           uuid.UUID
		member, active bool
	}{{ann.ID, true, true}, {idle.ID, true, false}, {guest.ID, true, true}, {stranger.ID, false, false}} {
		member, err := s.IsMember(ctx, org.ID, c.user)
		if err != nil || member != c.member {
			t.Errorf("IsMember(%s) = %v, %v; want %v", c.user, member, err, c.member)
		}
		active, err := s.IsActiveMember(ctx, org.ID, c.user)
		if err != nil || active != c.active {
			t.Errorf("IsActiveMember(%s) = %v, %v; want %v", c.user, active, err, c.active)
		}
	}
	ids, err := s.MemberIDs(ctx, org.ID)
	if err != nil || len(ids) != 3 {
		t.Fatalf("member ids %v, %v", ids, err)
	}
}
