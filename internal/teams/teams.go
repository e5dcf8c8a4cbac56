// Package teams owns teams of agents and their members: who may see and
// change a team, and (with the transfers) who a transfer is assigned to.
//
// Rights (the spec's role matrix): creating and deleting a team takes
// teams:create / teams:delete (the Admin's); changing a team and its
// members takes teams:update, or being that team's manager. A team manager
// adds and removes agents; making someone a manager, or removing a manager,
// takes teams:update, so that a team manager cannot raise anyone to their
// own rank or remove their peers. Callers without teams:update see only the
// teams they are members of.
package teams

import (
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

// Strategies a team assigns transfers by.
var Strategies = []string{"round_robin", "load_balanced", "manual"}

const maxName = 100

// Caller is who asks: a user, and whether they hold teams:update (which
// reaches every team of the organization).
type Caller struct {
	UserID    uuid.UUID
	ManageAll bool
}

// Service manages teams.
type Service struct {
	db     *gorm.DB
	people People
	now    func() time.Time
}

// People reads the organization's users and memberships (the identity
// domain): a team member must be a member of the organization, and the
// members' listing and the assignments read their names and flags. db is
// the caller's transaction or pool.
type People interface {
	Users(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.User, error)
	IsMember(ctx context.Context, orgID, userID uuid.UUID) (bool, error)
}

// NewService wires the teams domain.
func NewService(db *gorm.DB, people People) *Service {
	return &Service{db: db, people: people, now: func() time.Time { return time.Now().UTC() }}
}

// View is a team with its number of members.
type View struct {
	models.Team
	MemberCount int64
}

// Input is a create or update; nil fields are left as they are (on create:
// defaults: round_robin, active).
type Input struct {
	Name               *string
	Description        *string
	AssignmentStrategy *string
	IsActive           *bool
}

const viewSQL = `SELECT t.*, (SELECT count(*) FROM team_members m WHERE m.team_id = t.id) AS member_count FROM teams t`

// List answers the teams the caller may see, by name.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, c Caller) ([]View, error) {
	var rows []View
	q := viewSQL + ` WHERE t.organization_id = @org`
	if !c.ManageAll {
		q += ` AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = t.id AND m.user_id = @user)`
	}
	err := s.db.WithContext(ctx).Raw(q+` ORDER BY lower(t.name), t.id`, map[string]any{"org": orgID, "user": c.UserID}).Scan(&rows).Error
	return rows, err
}

// Get answers a team the caller may see (404 otherwise: a team one may not
// see is not revealed).
func (s *Service) Get(ctx context.Context, orgID uuid.UUID, c Caller, id uuid.UUID) (*View, error) {
	var rows []View
	err := s.db.WithContext(ctx).Raw(viewSQL+` WHERE t.organization_id = ? AND t.id = ?`, orgID, id).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, apperr.NotFoundf("team not found")
	}
	if !c.ManageAll {
		if _, err := s.membership(ctx, orgID, id, c.UserID); err != nil {
			return nil, err
		}
	}
	return &rows[0], nil
}

// membership answers the caller's member row in the team; not a member is
// the team's 404.
func (s *Service) membership(ctx context.Context, orgID, teamID, userID uuid.UUID) (*models.TeamMember, error) {
	var m models.TeamMember
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Take(&m, "team_id = ? AND user_id = ?", teamID, userID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf("team not found")
	}
	return &m, err
}

// mayManage checks that the caller may change the team: teams:update, or
// the team's manager.
func (s *Service) mayManage(ctx context.Context, orgID uuid.UUID, c Caller, teamID uuid.UUID) error {
	if c.ManageAll {
		return nil
	}
	m, err := s.membership(ctx, orgID, teamID, c.UserID)
	if err != nil {
		return err
	}
	if m.Role != models.TeamRoleManager {
		return apperr.Forbiddenf("only an admin or this team's manager can change the team")
	}
	return nil
}

// Create stores a team.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in Input) (*View, error) {
	t := models.Team{OrganizationID: orgID, AssignmentStrategy: "round_robin", IsActive: true}
	if in.Name == nil {
		return nil, apperr.Invalidf("name is required")
	}
	if err := apply(&t, in); err != nil {
		return nil, err
	}
	if err := s.db.WithContext(ctx).Create(&t).Error; err != nil {
		return nil, duplicateName(err)
	}
	return &View{Team: t}, nil
}

// Update changes the fields given.
func (s *Service) Update(ctx context.Context, orgID uuid.UUID, c Caller, id uuid.UUID, in Input) (*View, error) {
	v, err := s.Get(ctx, orgID, Caller{ManageAll: true}, id)
	if err != nil {
		return nil, err
	}
	if err := s.mayManage(ctx, orgID, c, id); err != nil {
		return nil, err
	}
	if err := apply(&v.Team, in); err != nil {
		return nil, err
	}
	v.UpdatedAt = s.now()
	if err := s.db.WithContext(ctx).Select("name", "description", "assignment_strategy", "is_active", "updated_at").Save(&v.Team).Error; err != nil {
		return nil, duplicateName(err)
	}
	return v, nil
}

// Delete removes a team and its memberships.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.Team{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("team not found")
	}
	return nil
}

func apply(t *models.Team, in Input) error {
	if in.Name != nil {
		t.Name = strings.TrimSpace(*in.Name)
		if t.Name == "" {
			return apperr.Invalidf("name is required")
		}
		if len([]rune(t.Name)) > maxName {
			return apperr.Invalidf("name is longer than %d characters", maxName)
		}
	}
	if in.Description != nil {
		t.Description = strings.TrimSpace(*in.Description)
	}
	if in.AssignmentStrategy != nil {
		t.AssignmentStrategy = strings.TrimSpace(*in.AssignmentStrategy)
		if t.AssignmentStrategy == "" {
			t.AssignmentStrategy = "round_robin"
		}
		if !slices.Contains(Strategies, t.AssignmentStrategy) {
			return apperr.Invalidf("assignment_strategy must be one of %s", strings.Join(Strategies, ", "))
		}
	}
	if in.IsActive != nil {
		t.IsActive = *in.IsActive
	}
	return nil
}

func duplicateName(err error) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return apperr.Conflictf("a team with this name already exists")
	}
	return err
}

// Names answers the names of the organization's teams among ids (an id of
// no team of the organization is absent), read in db, the caller's
// transaction or pool: other domains' listings name their rows' teams with
// one lookup per page.
func (s *Service) Names(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	out := make(map[uuid.UUID]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   uuid.UUID
		Name string
	}
	err := db.WithContext(ctx).Model(&models.Team{}).Scopes(tenant.Scope(orgID)).Select("id, name").Where("id IN ?", ids).Scan(&rows).Error
	for _, r := range rows {
		out[r.ID] = r.Name
	}
	return out, err
}
