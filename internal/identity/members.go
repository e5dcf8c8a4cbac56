package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// MemberView is one membership of the organization.
type MemberView struct {
	ID             uuid.UUID
	UserID         uuid.UUID
	OrganizationID uuid.UUID
	RoleID         uuid.UUID
	RoleName       string
	IsDefault      bool
	Email          string
	FullName       string
	IsActive       bool
	CreatedAt      time.Time
}

const memberViewSQL = `
SELECT m.id, m.user_id, m.organization_id, m.role_id, r.name AS role_name, m.is_default,
       u.email, u.full_name, u.is_active, m.created_at
FROM organization_members m
JOIN users u ON u.id = m.user_id
JOIN roles r ON r.id = m.role_id
WHERE m.organization_id = @org`

// ListMembers lists the organization's members.
func (s *Service) ListMembers(ctx context.Context, orgID uuid.UUID, search string, pg paging.Params) ([]MemberView, int64, error) {
	where := ""
	args := map[string]any{"org": orgID}
	if search = strings.TrimSpace(search); search != "" {
		where = " AND (u.full_name ILIKE @q OR u.email ILIKE @q)"
		args["q"] = paging.Contains(search)
	}
	return paging.Raw[MemberView](s.db.WithContext(ctx), memberViewSQL+where, args, pg, "m.created_at, u.email")
}

// AddMemberInput names an existing user by id or email.
type AddMemberInput struct {
	UserID *uuid.UUID
	Email  string
	RoleID *uuid.UUID
}

// AddMember makes an existing user a member of the caller's organization.
func (s *Service) AddMember(ctx context.Context, p *Principal, in AddMemberInput) error {
	if err := sessionOnly(p, "add members"); err != nil {
		return err
	}
	if in.UserID == nil && strings.TrimSpace(in.Email) == "" {
		return apperr.Invalidf("user_id or email is required")
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u models.User
		q := tx.Model(&models.User{})
		if in.UserID != nil {
			q = q.Where("id = ?", *in.UserID)
		} else {
			q = q.Where("lower(email) = ?", strings.ToLower(strings.TrimSpace(in.Email)))
		}
		if err := q.Take(&u).Error; err != nil {
			return notFound(err, "user not found")
		}
		role, err := assignableRole(ctx, tx, p, in.RoleID)
		if err != nil {
			return err
		}
		err = tx.Create(&models.OrganizationMember{OrganizationID: p.OrgID, UserID: u.ID, RoleID: role.ID}).Error
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return apperr.Conflictf("user is already a member of this organization")
		}
		return err
	})
	s.principalsChanged(ctx, &p.OrgID)
	return err
}

func (s *Service) member(ctx context.Context, tx *gorm.DB, orgID, memberID uuid.UUID) (*models.OrganizationMember, error) {
	return tenant.Get[models.OrganizationMember](ctx, tx, orgID, memberID, "member not found")
}

// UpdateMemberRole changes a member's role; the caller must hold every
// permission the member holds here (checkMemberChange).
func (s *Service) UpdateMemberRole(ctx context.Context, p *Principal, memberID uuid.UUID, roleID *uuid.UUID) error {
	if err := sessionOnly(p, "change members' roles"); err != nil {
		return err
	}
	if roleID == nil {
		return apperr.Invalidf("role_id is required")
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		m, err := s.member(ctx, tx, p.OrgID, memberID)
		if err != nil {
			return err
		}
		role, err := assignableRole(ctx, tx, p, roleID)
		if err != nil {
			return err
		}
		if role.ID == m.RoleID {
			return nil
		}
		if err := checkMemberChange(ctx, tx, p, m.RoleID); err != nil {
			return err
		}
		if wasAdmin, err := isAdminRole(ctx, tx, p.OrgID, m.RoleID); err != nil {
			return err
		} else if wasAdmin {
			if err := ensureAdminRemains(ctx, tx, p.OrgID, m.UserID); err != nil {
				return err
			}
		}
		return tx.Model(m).Update("role_id", role.ID).Error
	})
	s.principalsChanged(ctx, &p.OrgID)
	return err
}

// RemoveMember removes a membership; the user account stays. The caller
// must hold every permission the member holds here (checkMemberChange).
func (s *Service) RemoveMember(ctx context.Context, p *Principal, memberID uuid.UUID) error {
	if err := sessionOnly(p, "remove members"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		m, err := s.member(ctx, tx, p.OrgID, memberID)
		if err != nil {
			return err
		}
		if err := checkMemberChange(ctx, tx, p, m.RoleID); err != nil {
			return err
		}
		if wasAdmin, err := isAdminRole(ctx, tx, p.OrgID, m.RoleID); err != nil {
			return err
		} else if wasAdmin {
			if err := ensureAdminRemains(ctx, tx, p.OrgID, m.UserID); err != nil {
				return err
			}
		}
		return tx.Delete(m).Error
	})
	s.principalsChanged(ctx, &p.OrgID)
	return err
}
