package identity

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/models"
)

// The reads of users and memberships that other domains make through their
// own small interfaces (teams, transfers, calling, contacts, dataops), so
// that identity alone names its tables. Each stays inside the organization
// it is given, and a listing makes one of them per page, never one per row.

// Users answers the users among ids, by id. Callers pass only ids they read
// from their organization's own rows (members of its teams, authors of its
// notes, agents of its transfers and calls: each a member when it was
// written), never ids from a request; so a user is read whatever their
// membership now, and a former member's name stays on what they left
// behind, as the joins this read replaced showed it. Only the id, home
// organization, email, name and the active and available flags are read.
// db is the caller's transaction or its pool: an assignment reads its
// candidates in the transaction that holds its lock.
func (s *Service) Users(ctx context.Context, db *gorm.DB, _ uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.User, error) {
	out := make(map[uuid.UUID]models.User, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []models.User
	err := db.WithContext(ctx).Raw(`SELECT u.id, u.organization_id, u.email, u.full_name, u.is_active, u.is_available FROM users u
		WHERE u.id IN ?`, ids).Scan(&rows).Error
	for _, u := range rows {
		out[u.ID] = u
	}
	return out, err
}

// IsMember reports whether the user is a member of the organization.
func (s *Service) IsMember(ctx context.Context, orgID, userID uuid.UUID) (bool, error) {
	var ok bool
	err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM organization_members WHERE organization_id = ? AND user_id = ?)`,
		orgID, userID).Scan(&ok).Error
	return ok, err
}

// IsActiveMember reports whether the user is a member of the organization
// whose account is active (one may be given work).
func (s *Service) IsActiveMember(ctx context.Context, orgID, userID uuid.UUID) (bool, error) {
	var ok bool
	err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM organization_members m JOIN users u ON u.id = m.user_id
		WHERE m.organization_id = ? AND m.user_id = ? AND u.is_active)`, orgID, userID).Scan(&ok).Error
	return ok, err
}

// MemberIDs answers the ids of the organization's members.
func (s *Service) MemberIDs(ctx context.Context, orgID uuid.UUID) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.WithContext(ctx).Raw(`SELECT user_id FROM organization_members WHERE organization_id = ?`, orgID).Scan(&ids).Error
	return ids, err
}
