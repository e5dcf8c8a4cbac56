package teams

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// The assignments of other domains' work to a team's members (transfers'
// conversations, calling's calls) go through these methods, which take the
// caller's transaction: the team's lock, its members' turns and their
// round-robin moves stay in the assignment's transaction, in the order the
// caller gives.

// LockIn locks the organization's team in tx until tx ends: a team's
// automatic assignments run one at a time under it, so that each reads the
// turns and loads the previous one committed. NotFound when the
// organization has no such team.
func (s *Service) LockIn(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID) (*models.Team, error) {
	var t models.Team
	if err := tx.WithContext(ctx).Raw(`SELECT * FROM teams WHERE id = ? AND organization_id = ? FOR UPDATE`, teamID, orgID).Scan(&t).Error; err != nil {
		return nil, err
	}
	if t.ID == uuid.Nil {
		return nil, apperr.NotFoundf("team not found")
	}
	return &t, nil
}

// StrategyIn answers the assignment strategy of the organization's team,
// read in tx (without a lock). NotFound when the organization has no such
// team.
func (s *Service) StrategyIn(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID) (string, error) {
	var strategy string
	if err := tx.WithContext(ctx).Raw(`SELECT assignment_strategy FROM teams WHERE id = ? AND organization_id = ?`, teamID, orgID).
		Row().Scan(&strategy); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", apperr.NotFoundf("team not found")
		}
		return "", err
	}
	return strategy, nil
}

// Loads counts the current work of each of agents (absent: none), in tx:
// the caller's measure for load_balanced (a conversation's active
// transfers, a call's connected calls).
type Loads func(ctx context.Context, tx *gorm.DB, agents []uuid.UUID) (map[uuid.UUID]int64, error)

// NextAgentIn picks, in tx, the member of the organization's team whom
// strategy gives the next piece of work, among the members whose user is
// active and available, or uuid.Nil when none is:
//
//   - round_robin: the member whose last assignment is the oldest (never
//     assigned first), then the earliest to join, then by user id;
//   - load_balanced: the fewest by loads, the round-robin order breaking
//     ties;
//   - manual: nobody.
//
// The caller that needs one assignment at a time holds the team's lock
// (LockIn).
func (s *Service) NextAgentIn(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID, strategy string, loads Loads) (uuid.UUID, error) {
	if strategy == "manual" {
		return uuid.Nil, nil
	}
	var members []uuid.UUID
	if err := tx.WithContext(ctx).Raw(`SELECT user_id FROM team_members WHERE team_id = ? AND organization_id = ?
		ORDER BY last_assigned_at ASC NULLS FIRST, created_at, user_id`, teamID, orgID).Scan(&members).Error; err != nil {
		return uuid.Nil, err
	}
	users, err := s.people.Users(ctx, tx, orgID, members)
	if err != nil {
		return uuid.Nil, err
	}
	candidates := slices.DeleteFunc(members, func(id uuid.UUID) bool {
		u, ok := users[id]
		return !ok || !u.IsActive || !u.IsAvailable
	})
	if len(candidates) == 0 {
		return uuid.Nil, nil
	}
	if strategy == "load_balanced" {
		load, err := loads(ctx, tx, candidates)
		if err != nil {
			return uuid.Nil, err
		}
		// Stable: equal loads keep the round-robin order.
		slices.SortStableFunc(candidates, func(a, b uuid.UUID) int { return cmp.Compare(load[a], load[b]) })
	}
	return candidates[0], nil
}

// AssignedIn moves the member's round-robin turn in tx, the assignment's
// transaction: their last assignment is at (zero: the database's clock).
// Nothing changes when the user is no member of the team.
func (s *Service) AssignedIn(ctx context.Context, tx *gorm.DB, orgID, teamID, userID uuid.UUID, at time.Time) error {
	var when any = gorm.Expr("now()")
	if !at.IsZero() {
		when = at
	}
	return tx.WithContext(ctx).Exec(`UPDATE team_members SET last_assigned_at = ? WHERE team_id = ? AND organization_id = ? AND user_id = ?`,
		when, teamID, orgID, userID).Error
}

// IsTeamMember reports whether the user is a member of the organization's
// team. NotFound when the organization has no such team.
func (s *Service) IsTeamMember(ctx context.Context, orgID, teamID, userID uuid.UUID) (bool, error) {
	var exists, member bool
	if err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM teams WHERE id = @team AND organization_id = @org),
		EXISTS (SELECT 1 FROM team_members WHERE team_id = @team AND organization_id = @org AND user_id = @user)`,
		map[string]any{"team": teamID, "org": orgID, "user": userID}).Row().Scan(&exists, &member); err != nil {
		return false, err
	}
	if !exists {
		return false, apperr.NotFoundf("team not found")
	}
	return member, nil
}
