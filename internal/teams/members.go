package teams

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
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
// first, then by name.
func (s *Service) Members(ctx context.Context, orgID uuid.UUID, c Caller, teamID uuid.UUID) ([]Member, error) {
	if _, err := s.Get(ctx, orgID, c, teamID); err != nil {
		return nil, err
	}
	var rows []Member
	err := s.db.WithContext(ctx).Raw(`SELECT m.id, m.user_id, u.full_name, u.email, m.role, u.is_available, m.last_assigned_at
		FROM team_members m JOIN users u ON u.id = m.user_id
		WHERE m.organization_id = ? AND m.team_id = ?
		ORDER BY m.role = 'manager' DESC, lower(u.full_name), lower(u.email)`, orgID, teamID).Scan(&rows).Error
	return rows, err
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
	var isMember bool
	if err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM organization_members WHERE organization_id = ? AND user_id = ?)`,
		orgID, userID).Scan(&isMember).Error; err != nil {
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
	var m Member
	err := s.db.WithContext(ctx).Raw(`SELECT m.id, m.user_id, u.full_name, u.email, m.role, u.is_available, m.last_assigned_at
		FROM team_members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ? AND m.id = ?`, orgID, id).Scan(&m).Error
	return &m, err
}

// TeamsOf answers the ids of the organization's teams that user is a
// member of (the event stream's team rule, as transfers' visible).
func (s *Service) TeamsOf(ctx context.Context, orgID, user uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.WithContext(ctx).Raw(`SELECT team_id FROM team_members WHERE organization_id = ? AND user_id = ?`, orgID, user).Scan(&ids).Error
	return ids, err
}
