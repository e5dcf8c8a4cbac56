package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// RoleView is a role with its permission count and, in detail, its permissions.
type RoleView struct {
	models.Role
	PermissionCount int
	Permissions     []models.Permission
}

// ListRoles lists the organization's roles, system roles first.
func (s *Service) ListRoles(ctx context.Context, orgID uuid.UUID, search string) ([]RoleView, error) {
	q := s.db.WithContext(ctx).Model(&models.Role{}).Scopes(tenant.Scope(orgID)).
		Select("roles.*, (SELECT count(*) FROM role_permissions rp WHERE rp.role_id = roles.id) AS permission_count").
		Order("is_system DESC, name")
	if search = strings.TrimSpace(search); search != "" {
		q = q.Where("name ILIKE ?", paging.Contains(search))
	}
	var rows []struct {
		models.Role
		PermissionCount int
	}
	if err := q.Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]RoleView, len(rows))
	for i, r := range rows {
		out[i] = RoleView{Role: r.Role, PermissionCount: r.PermissionCount}
	}
	return out, nil
}

// Role returns one role with its permissions.
func (s *Service) Role(ctx context.Context, orgID, id uuid.UUID) (*RoleView, error) {
	r, err := tenant.Get[models.Role](ctx, s.db, orgID, id, "role not found")
	if err != nil {
		return nil, err
	}
	perms, err := rolePermissions(ctx, s.db, r.ID)
	if err != nil {
		return nil, err
	}
	return &RoleView{Role: *r, PermissionCount: len(perms), Permissions: perms}, nil
}

func rolePermissions(ctx context.Context, db *gorm.DB, roleID uuid.UUID) ([]models.Permission, error) {
	var perms []models.Permission
	err := db.WithContext(ctx).Joins("JOIN role_permissions rp ON rp.permission_id = permissions.id").
		Where("rp.role_id = ?", roleID).Order("resource, action").Find(&perms).Error
	return perms, err
}

// RoleInput is the body of role create and update; nil fields are unchanged.
type RoleInput struct {
	Name        *string
	Description *string
	Permissions *[]string
	IsDefault   *bool
}

// CreateRole creates a custom role.
func (s *Service) CreateRole(ctx context.Context, p *Principal, in RoleInput) (*RoleView, error) {
	if err := sessionOnly(p, "create roles"); err != nil {
		return nil, err
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, apperr.Invalidf("name is required")
	}
	if in.Permissions == nil {
		return nil, apperr.Invalidf("permissions is required (an array of resource:action keys)")
	}
	role := models.Role{OrganizationID: p.OrgID}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return s.saveRole(ctx, tx, p, &role, in)
	})
	if err != nil {
		return nil, err
	}
	return s.Role(ctx, p.OrgID, role.ID)
}

// UpdateRole changes a custom role. System roles cannot be changed.
func (s *Service) UpdateRole(ctx context.Context, p *Principal, id uuid.UUID, in RoleInput) (*RoleView, error) {
	if err := sessionOnly(p, "change roles"); err != nil {
		return nil, err
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		role, err := tenant.Get[models.Role](ctx, tx.Clauses(clause.Locking{Strength: "UPDATE"}), p.OrgID, id, "role not found")
		if err != nil {
			return err
		}
		if role.IsSystem {
			return apperr.Forbiddenf("system roles cannot be modified")
		}
		return s.saveRole(ctx, tx, p, role, in)
	})
	s.principalsChanged(ctx, &p.OrgID)
	if err != nil {
		return nil, err
	}
	return s.Role(ctx, p.OrgID, id)
}

func (s *Service) saveRole(ctx context.Context, tx *gorm.DB, p *Principal, role *models.Role, in RoleInput) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" {
			return apperr.Invalidf("name must not be empty")
		}
		if len([]rune(name)) > 100 {
			return apperr.Invalidf("name must be at most 100 characters")
		}
		role.Name = name
	}
	if in.Description != nil {
		role.Description = strings.TrimSpace(*in.Description)
	}
	var perms []models.Permission
	if in.Permissions != nil {
		var err error
		if perms, err = resolvePermissionKeys(ctx, tx, *in.Permissions); err != nil {
			return err
		}
		if err := checkGrantable(p, perms); err != nil {
			return err
		}
	}
	makeDefault := in.IsDefault != nil && *in.IsDefault && !role.IsDefault
	if in.IsDefault != nil && !*in.IsDefault && role.IsDefault {
		return apperr.Invalidf("an organization needs a default role: mark another role as default instead")
	}
	// A rename of the default role is not checked: a default role stored
	// before these rules must stay editable until its permissions are fixed.
	if makeDefault || (role.IsDefault && in.Permissions != nil) {
		if err := checkDefaultRole(ctx, tx, p, role, perms, in.Permissions != nil, makeDefault); err != nil {
			return err
		}
	}
	if makeDefault {
		// one default role per organization: the new default replaces the old
		if err := tx.Model(&models.Role{}).Scopes(tenant.Scope(p.OrgID)).Where("is_default").
			Update("is_default", false).Error; err != nil {
			return err
		}
		role.IsDefault = true
	}
	role.UpdatedAt = s.now()
	if err := tx.Save(role).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return apperr.Conflictf("a role with this name already exists")
		}
		return err
	}
	if in.Permissions != nil {
		return setRolePermissions(tx, role.ID, perms)
	}
	return nil
}

// DeleteRole deletes a custom role that no member holds.
func (s *Service) DeleteRole(ctx context.Context, p *Principal, id uuid.UUID) error {
	if err := sessionOnly(p, "delete roles"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		role, err := tenant.Get[models.Role](ctx, tx.Clauses(clause.Locking{Strength: "UPDATE"}), p.OrgID, id, "role not found")
		if err != nil {
			return err
		}
		if role.IsSystem {
			return apperr.Forbiddenf("system roles cannot be deleted")
		}
		if role.IsDefault {
			return apperr.Conflictf("the default role cannot be deleted: mark another role as default first")
		}
		var n int64
		if err := tx.Model(&models.OrganizationMember{}).Where("role_id = ?", id).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return apperr.Conflictf("role is assigned to %d member(s); assign them another role first", n)
		}
		return tx.Delete(&role).Error
	})
	s.principalsChanged(ctx, &p.OrgID)
	return err
}

// defaultRoleForbidden are the resources none of whose permissions the
// default role may carry, besides settings:update: the default role is what
// anyone who self-registers receives, so it must not manage people, roles,
// credentials, outbound data flows or the organization's settings.
var defaultRoleForbidden = []string{"users", "roles", "api_keys", "webhooks"}

// forbiddenForDefault returns the keys of perms the default role may not
// carry, sorted.
func forbiddenForDefault(perms []models.Permission) []string {
	var bad []string
	for _, perm := range perms {
		if slices.Contains(defaultRoleForbidden, perm.Resource) || perm.Key() == "settings:update" {
			bad = append(bad, perm.Key())
		}
	}
	slices.Sort(bad)
	return bad
}

// checkDefaultRole enforces the default-role rules on a role that is or is
// becoming the default. perms are its new permissions when changed is true;
// otherwise its stored ones apply. Making a role the default needs
// roles:update and every one of its permissions (checkGrantable already
// covered new ones); no one, super admins included, may give the default
// role a permission forbiddenForDefault names.
func checkDefaultRole(ctx context.Context, tx *gorm.DB, p *Principal, role *models.Role, perms []models.Permission, changed, makeDefault bool) error {
	if !changed && role.ID != uuid.Nil {
		var err error
		if perms, err = rolePermissions(ctx, tx, role.ID); err != nil {
			return err
		}
	}
	if makeDefault {
		if !p.IsSuperAdmin && !p.Can("roles:update") {
			return apperr.Forbiddenf("making a role the default needs roles:update")
		}
		if err := checkGrantable(p, perms); err != nil {
			return err
		}
	}
	if bad := forbiddenForDefault(perms); len(bad) > 0 {
		return apperr.Invalidf("the default role may not carry %s: self-registered users receive it "+
			"(no users:*, roles:*, api_keys:*, webhooks:* or settings:update)", strings.Join(bad, ", "))
	}
	return nil
}

// checkGrantable stops privilege escalation: nobody but a super admin can
// grant a permission they do not hold themselves.
func checkGrantable(p *Principal, perms []models.Permission) error {
	if p.IsSuperAdmin {
		return nil
	}
	var missing []string
	for _, perm := range perms {
		if !p.Can(perm.Key()) {
			missing = append(missing, perm.Key())
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return apperr.Forbiddenf("you cannot grant permissions you do not hold: %s", strings.Join(missing, ", "))
	}
	return nil
}

// roleForAssignment returns the role to give a member: the named one (which
// must belong to the organization) or the organization's default role.
func roleForAssignment(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, roleID *uuid.UUID) (*models.Role, error) {
	var role models.Role
	q := tx.WithContext(ctx).Scopes(tenant.Scope(orgID))
	if roleID == nil {
		if err := q.Where("is_default").Take(&role).Error; err != nil {
			return nil, notFound(err, "the organization has no default role")
		}
		return &role, nil
	}
	if err := q.Take(&role, "id = ?", *roleID).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.Invalidf("role_id does not name a role of this organization")
		}
		return nil, err
	}
	return &role, nil
}

// assignableRole is roleForAssignment plus the escalation check.
func assignableRole(ctx context.Context, tx *gorm.DB, p *Principal, roleID *uuid.UUID) (*models.Role, error) {
	role, err := roleForAssignment(ctx, tx, p.OrgID, roleID)
	if err != nil {
		return nil, err
	}
	perms, err := rolePermissions(ctx, tx, role.ID)
	if err != nil {
		return nil, err
	}
	if err := checkGrantable(p, perms); err != nil {
		return nil, err
	}
	return role, nil
}

// errLastAdmin protects an organization from losing its last active admin.
var errLastAdmin = apperr.Conflictf("an organization must keep at least one active admin")

// ensureAdminRemains fails when, without userID, the organization would have
// no active member in the Admin role. It locks the Admin role row so that two
// concurrent demotions cannot both pass the check.
func ensureAdminRemains(ctx context.Context, tx *gorm.DB, orgID, userID uuid.UUID) error {
	var admin models.Role
	if err := tx.WithContext(ctx).Scopes(tenant.Scope(orgID)).Clauses(clause.Locking{Strength: "UPDATE"}).
		Where("is_system AND name = ?", RoleAdmin).Take(&admin).Error; err != nil {
		// Every organization is created with its Admin role: its absence is
		// a broken invariant (500), not a missing resource of the caller.
		return fmt.Errorf("organization %s: the Admin role: %v", orgID, err)
	}
	var n int64
	err := tx.Table("organization_members AS m").Joins("JOIN users u ON u.id = m.user_id").
		Where("m.organization_id = ? AND m.role_id = ? AND u.is_active AND m.user_id <> ?", orgID, admin.ID, userID).
		Count(&n).Error
	if err != nil {
		return err
	}
	if n == 0 {
		return errLastAdmin
	}
	return nil
}

// isAdminRole reports whether roleID is the organization's system Admin role.
func isAdminRole(ctx context.Context, tx *gorm.DB, orgID, roleID uuid.UUID) (bool, error) {
	var n int64
	err := tx.WithContext(ctx).Model(&models.Role{}).Scopes(tenant.Scope(orgID)).
		Where("id = ? AND is_system AND name = ?", roleID, RoleAdmin).Count(&n).Error
	return n > 0, err
}
