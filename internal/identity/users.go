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
	"wharf/models"
)

// UserView is a user as seen from one organization: with the role held there
// and whether the user is a member from another organization.
type UserView struct {
	ID              uuid.UUID
	Email           string
	FullName        string
	IsActive        bool
	IsAvailable     bool
	IsMember        bool
	RoleID          uuid.UUID
	RoleName        string
	RoleIsSystem    bool
	RoleDescription string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const userViewSQL = `
SELECT u.id, u.email, u.full_name, u.is_active, u.is_available, u.created_at, u.updated_at,
       u.organization_id <> m.organization_id AS is_member,
       r.id AS role_id, r.name AS role_name, r.is_system AS role_is_system, r.description AS role_description
FROM organization_members m
JOIN users u ON u.id = m.user_id
JOIN roles r ON r.id = m.role_id
WHERE m.organization_id = @org`

// ListUsers lists the organization's users, optionally filtered by a search
// on name or email.
func (s *Service) ListUsers(ctx context.Context, orgID uuid.UUID, search string, pg paging.Params) ([]UserView, int64, error) {
	where := ""
	args := map[string]any{"org": orgID}
	if search = strings.TrimSpace(search); search != "" {
		where = " AND (u.full_name ILIKE @q OR u.email ILIKE @q)"
		args["q"] = paging.Contains(search)
	}
	return paging.Raw[UserView](s.db.WithContext(ctx), userViewSQL+where, args, pg, "u.full_name, u.email")
}

// User returns one user of the organization.
func (s *Service) User(ctx context.Context, orgID, id uuid.UUID) (*UserView, error) {
	return userView(ctx, s.db, orgID, id)
}

func userView(ctx context.Context, db *gorm.DB, orgID, id uuid.UUID) (*UserView, error) {
	var out []UserView
	if err := db.WithContext(ctx).Raw(userViewSQL+" AND u.id = @id", map[string]any{"org": orgID, "id": id}).Scan(&out).Error; err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, apperr.NotFoundf("user not found")
	}
	return &out[0], nil
}

// CreateUserInput is the body of POST /api/users.
type CreateUserInput struct {
	Email, Password, FullName string
	RoleID                    *uuid.UUID
}

// CreateUser creates a user whose home is the caller's organization.
func (s *Service) CreateUser(ctx context.Context, p *Principal, in CreateUserInput) (*UserView, error) {
	if err := sessionOnly(p, "create users"); err != nil {
		return nil, err
	}
	user, err := validNewUser(in.Email, in.Password, in.FullName)
	if err != nil {
		return nil, err
	}
	// The role is checked before the password is hashed, so a refused
	// request costs no argon2 work; the transaction checks it again.
	if _, err := assignableRole(ctx, s.db, p, in.RoleID); err != nil {
		return nil, err
	}
	if user.PasswordHash, err = s.hashPassword(ctx, in.Password); err != nil {
		return nil, err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		role, err := assignableRole(ctx, tx, p, in.RoleID)
		if err != nil {
			return err
		}
		return insertUserWithMembership(tx, user, p.OrgID, role.ID)
	})
	if err != nil {
		return nil, err
	}
	return s.User(ctx, p.OrgID, user.ID)
}

// UpdateUserInput is the body of PUT /api/users/{id}; nil fields are unchanged.
type UpdateUserInput struct {
	Email, Password, FullName *string
	RoleID                    *uuid.UUID
	IsActive                  *bool
}

// errOwnPassword sends users to the endpoint that checks the current
// password: a stolen session must not be enough to take over the account.
var errOwnPassword = apperr.Forbiddenf("use PUT /api/me/password to change your own password: it asks for the current one")

// UpdateUser changes a user. A member from another organization is only
// theirs to manage there: here only their role can change. Changing another
// user's password, email or active flag acts on their login everywhere, so
// it follows checkAccountChange; a role change acts here only and follows
// checkMemberChange.
func (s *Service) UpdateUser(ctx context.Context, p *Principal, id uuid.UUID, in UpdateUserInput) (*UserView, error) {
	if err := sessionOnly(p, "change users"); err != nil {
		return nil, err
	}
	if in.Password != nil && id == p.UserID {
		return nil, errOwnPassword
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := userView(ctx, tx, p.OrgID, id)
		if err != nil {
			return err
		}
		if cur.IsMember && (in.Email != nil || in.Password != nil || in.FullName != nil || in.IsActive != nil) {
			return apperr.Forbiddenf("this user belongs to another organization: only their role can be changed here")
		}
		updates := map[string]any{}
		accountChange := false // password, email or active flag: the login itself
		if in.Email != nil {
			email, err := normalizeEmail(*in.Email)
			if err != nil {
				return err
			}
			if email != cur.Email {
				updates["email"] = email
				accountChange = true
			}
		}
		if in.FullName != nil {
			name := strings.TrimSpace(*in.FullName)
			if name == "" {
				return apperr.Invalidf("full_name must not be empty")
			}
			updates["full_name"] = name
		}
		if in.Password != nil {
			if err := ValidatePassword("password", *in.Password); err != nil {
				return err
			}
			accountChange = true
		}
		deactivate := in.IsActive != nil && !*in.IsActive && cur.IsActive
		if deactivate && id == p.UserID {
			return apperr.Invalidf("you cannot deactivate yourself")
		}
		if in.IsActive != nil && *in.IsActive != cur.IsActive {
			updates["is_active"] = *in.IsActive
			accountChange = true
		}
		if accountChange && id != p.UserID {
			if err := checkAccountChange(ctx, tx, p, id); err != nil {
				return err
			}
		}
		if deactivate {
			if err := ensureAdminEverywhere(ctx, tx, p.OrgID, id); err != nil {
				return err
			}
		}
		if in.RoleID != nil && *in.RoleID != cur.RoleID {
			if err := checkMemberChange(ctx, tx, p, cur.RoleID); err != nil {
				return err
			}
			role, err := assignableRole(ctx, tx, p, in.RoleID)
			if err != nil {
				return err
			}
			if role.Name != RoleAdmin || !role.IsSystem {
				if err := guardAdmin(ctx, tx, p.OrgID, cur); err != nil {
					return err
				}
			}
			if err := tx.Model(&models.OrganizationMember{}).Where("organization_id = ? AND user_id = ?", p.OrgID, id).
				Update("role_id", role.ID).Error; err != nil {
				return err
			}
		}
		if in.Password != nil {
			// Hashed last: every check above has passed.
			hash, err := s.hashPassword(ctx, *in.Password)
			if err != nil {
				return err
			}
			updates["password_hash"] = hash
		}
		if len(updates) > 0 {
			updates["updated_at"] = s.now()
			if err := tx.Model(&models.User{}).Where("id = ?", id).Updates(updates).Error; err != nil {
				if errors.Is(err, gorm.ErrDuplicatedKey) {
					return apperr.Conflictf("a user with this email already exists")
				}
				return err
			}
		}
		if in.Password != nil || (in.IsActive != nil && !*in.IsActive) {
			return tx.Model(&models.RefreshToken{}).Where("user_id = ? AND revoked_at IS NULL", id).
				Update("revoked_at", s.now()).Error
		}
		return nil
	})
	s.principalsChanged(ctx, nil)
	if err != nil {
		return nil, err
	}
	return s.User(ctx, p.OrgID, id)
}

// guardAdmin refuses a change that would leave the organization without an
// active admin, when cur currently is an admin.
func guardAdmin(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, cur *UserView) error {
	if !(cur.RoleIsSystem && cur.RoleName == RoleAdmin) {
		return nil
	}
	return ensureAdminRemains(ctx, tx, orgID, cur.ID)
}

// DeleteUser deletes a user of this organization, or, for a member from
// another organization, removes the membership only. Deleting the account
// removes it from every organization, so it follows checkAccountChange and
// the last-admin guard of each; removing a membership follows
// checkMemberChange.
func (s *Service) DeleteUser(ctx context.Context, p *Principal, id uuid.UUID) error {
	if err := sessionOnly(p, "delete users"); err != nil {
		return err
	}
	if id == p.UserID {
		return apperr.Invalidf("you cannot delete yourself")
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := userView(ctx, tx, p.OrgID, id)
		if err != nil {
			return err
		}
		if cur.IsMember {
			if err := checkMemberChange(ctx, tx, p, cur.RoleID); err != nil {
				return err
			}
			if err := guardAdmin(ctx, tx, p.OrgID, cur); err != nil {
				return err
			}
			return tx.Where("organization_id = ? AND user_id = ?", p.OrgID, id).Delete(&models.OrganizationMember{}).Error
		}
		if err := checkAccountChange(ctx, tx, p, id); err != nil {
			return err
		}
		if err := ensureAdminEverywhere(ctx, tx, p.OrgID, id); err != nil {
			return err
		}
		return tx.Delete(&models.User{}, "id = ?", id).Error
	})
	s.principalsChanged(ctx, nil)
	return err
}

// SetAvailability sets whether a user takes chats. Users may set their own;
// setting someone else's needs users:update (checked by the router).
func (s *Service) SetAvailability(ctx context.Context, orgID, id uuid.UUID, available bool) (*UserView, error) {
	if _, err := userView(ctx, s.db, orgID, id); err != nil {
		return nil, err
	}
	if err := s.db.WithContext(ctx).Model(&models.User{}).Where("id = ?", id).
		Updates(map[string]any{"is_available": available, "updated_at": s.now()}).Error; err != nil {
		return nil, err
	}
	return userView(ctx, s.db, orgID, id)
}

// Available reports whether a user takes chats (what SetAvailability set),
// for the user's own profile.
func (s *Service) Available(ctx context.Context, userID uuid.UUID) (bool, error) {
	var u models.User
	if err := s.db.WithContext(ctx).Select("is_available").Take(&u, "id = ?", userID).Error; err != nil {
		return false, notFound(err, "user not found")
	}
	return u.IsAvailable, nil
}
