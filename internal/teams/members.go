package teams

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// Member is a team member with the user's name, email and availability.
type Member struct {
	ID             uuid.UUID
	UserID         uuid.UUID
	FullName       string
	Email          string
	Role           string
	IsAvailable    bool
	LastAssignedAt *time.Time
}

// Members answers the members of a team the caller may see, managers
// first, then by name (lower-cased, compared byte by byte) and email.
func (s *Service) Members(ctx context.Context, orgID uuid.UUID, c Caller, teamID uuid.UUID) ([]Member, error) {
	if _, err := s.Get(ctx, orgID, c, teamID); err != nil {
		return nil, err
	}
	var rows []models.TeamMember
	if err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("team_id = ?", teamID).Find(&rows).Error; err != nil {
		return nil, err
	}
	out, err := s.withUsers(ctx, orgID, rows)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Member) int {
		if am, bm := a.Role == models.TeamRoleManager, b.Role == models.TeamRoleManager; am != bm {
			if am {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(strings.ToLower(a.FullName), strings.ToLower(b.FullName)),
			strings.Compare(strings.ToLower(a.Email), strings.ToLower(b.Email)), strings.Compare(a.ID.String(), b.ID.String()))
	})
	return out, nil
}

// withUsers gives the members their users' names, emails and availability,
// read from identity in one lookup. A team member is a member of the
// organization (its foreign key), so each has a user; one removed since the
// rows were read is left out, as the join did.
func (s *Service) withUsers(ctx context.Context, orgID uuid.UUID, rows []models.TeamMember) ([]Member, error) {
	ids := make([]uuid.UUID, len(rows))
	for i, m := range rows {
		ids[i] = m.UserID
	}
	users, err := s.people.Users(ctx, s.db, orgID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(rows))
	for _, m := range rows {
		u, ok := users[m.UserID]
		if !ok {
			continue
		}
		out = append(out, Member{ID: m.ID, UserID: m.UserID, FullName: u.FullName, Email: u.Email, Role: m.Role,
			IsAvailable: u.IsAvailable, LastAssignedAt: m.LastAssignedAt})
	}
	return out, nil
}

// AddMember puts a member of the organization in the team. Team managers
// add agents; a manager is made by a caller with teams:update.
func (s *Service) AddMember(ctx context.Context, orgID uuid.UUID, c Caller, teamID, userID uuid.UUID, role string) (*Member, error) {
	if role == "" {
		role = models.TeamRoleAgent
	}
	if role != models.TeamRoleAgent && role != models.TeamRoleManager {
		return nil, apperr.Invalidf("role must be manager or agent")
	}
	if _, err := s.Get(ctx, orgID, Caller{ManageAll: true}, teamID); err != nil {
		return nil, err
	}
	if err := s.mayManage(ctx, orgID, c, teamID); err != nil {
		return nil, err
	}
	if role == models.TeamRoleManager && !c.ManageAll {
		return nil, apperr.Forbiddenf("only an admin can make a team manager")
	}
	isMember, err := s.people.IsMember(ctx, orgID, userID)
	if err != nil {
		return nil, err
	}
	if !isMember {
		return nil, apperr.Invalidf("user_id is not a member of this organization")
	}
	m := models.TeamMember{OrganizationID: orgID, TeamID: teamID, UserID: userID, Role: role}
	if err := s.db.WithContext(ctx).Create(&m).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, apperr.Conflictf("the user is already a member of this team")
		}
		return nil, err
	}
	return s.member(ctx, orgID, m.ID)
}

// RemoveMember takes a user out of the team. Removing a manager takes
// teams:update.
func (s *Service) RemoveMember(ctx context.Context, orgID uuid.UUID, c Caller, teamID, userID uuid.UUID) error {
	if _, err := s.Get(ctx, orgID, Caller{ManageAll: true}, teamID); err != nil {
		return err
	}
	if err := s.mayManage(ctx, orgID, c, teamID); err != nil {
		return err
	}
	var m models.TeamMember
	err := s.db.WithContext(ctx).Take(&m, "organization_id = ? AND team_id = ? AND user_id = ?", orgID, teamID, userID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return apperr.NotFoundf("team member not found")
	}
	if err != nil {
		return err
	}
	if m.Role == models.TeamRoleManager && !c.ManageAll {
		return apperr.Forbiddenf("only an admin can remove a team manager")
	}
	return s.db.WithContext(ctx).Delete(&models.TeamMember{}, "id = ?", m.ID).Error
}

func (s *Service) member(ctx context.Context, orgID, id uuid.UUID) (*Member, error) {
	var rows []models.TeamMember
	if err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("id = ?", id).Find(&rows).Error; err != nil {
		return nil, err
	}
	out, err := s.withUsers(ctx, orgID, rows)
	if err != nil || len(out) == 0 {
		return &Member{}, err
	}
	return &out[0], nil
}

// TeamsOf answers the ids of the organization's teams that user is a
// member of (the event stream's team rule, as transfers' visible).
func (s *Service) TeamsOf(ctx context.Context, orgID, user uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.WithContext(ctx).Raw(`SELECT team_id FROM team_members WHERE organization_id = ? AND user_id = ?`, orgID, user).Scan(&ids).Error
	return ids, err
}
