package identity

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
)

// Who may change whom. Permissions let a caller reach a user (users:update,
// users:delete); these rules decide whether the caller is powerful enough for
// that user, so that nobody takes over an account that can do more than they
// can.

// accountChangeSQL finds the first organization where the caller does not
// hold every permission the target holds there, whether because the caller is
// not a member or because the caller's role lacks a permission of the
// target's role; the caller's current organization is reported first, then
// the ones the caller belongs to (whose names the caller may see).
const accountChangeSQL = `
SELECT u.is_super_admin, f.organization_id, f.name, f.caller_is_member
FROM users u
LEFT JOIN LATERAL (
  SELECT tm.organization_id, o.name, cm.id IS NOT NULL AS caller_is_member
  FROM organization_members tm
  JOIN organizations o ON o.id = tm.organization_id
  LEFT JOIN organization_members cm ON cm.organization_id = tm.organization_id AND cm.user_id = @caller
  WHERE tm.user_id = u.id
    AND (cm.id IS NULL OR EXISTS (
      SELECT 1 FROM role_permissions tp
      WHERE tp.role_id = tm.role_id
        AND NOT EXISTS (SELECT 1 FROM role_permissions cp
                        WHERE cp.role_id = cm.role_id AND cp.permission_id = tp.permission_id)))
  ORDER BY (tm.organization_id = @org) DESC, (cm.id IS NOT NULL) DESC, o.name
  LIMIT 1) f ON true
WHERE u.id = @target`

// checkAccountChange decides whether p may change another user's login (the
// password, email or active flag) or delete the account. A login opens every
// organization the user belongs to, so a super admin may, and anyone else
// only when the target is not a super admin and, in every organization the
// target belongs to, the caller is a member whose role holds every
// permission the target's role holds there.
func checkAccountChange(ctx context.Context, tx *gorm.DB, p *Principal, targetID uuid.UUID) error {
	if p.IsSuperAdmin {
		return nil
	}
	var row struct {
		IsSuperAdmin   bool
		OrganizationID *uuid.UUID
		Name           *string
		CallerIsMember *bool
	}
	err := tx.WithContext(ctx).Raw(accountChangeSQL, map[string]any{"caller": p.UserID, "org": p.OrgID, "target": targetID}).
		Scan(&row).Error
	switch {
	case err != nil:
		return err
	case row.IsSuperAdmin:
		return apperr.Forbiddenf("only a super admin can change a super admin's account")
	case row.OrganizationID == nil:
		return nil
	case *row.CallerIsMember:
		return apperr.Forbiddenf("you cannot change a user who holds permissions you do not hold (in organization %q)", *row.Name)
	default:
		// Not a member there: the organization's name is not the caller's
		// to learn.
		return apperr.Forbiddenf("you cannot change a user who holds permissions you do not hold (in another organization); " +
			"only they or a super admin can change their account")
	}
}

// checkMemberChange decides whether p may change the role of, or remove, a
// member of p's organization who holds targetRoleID there: p must hold every
// permission of that role (a super admin may always).
func checkMemberChange(ctx context.Context, tx *gorm.DB, p *Principal, targetRoleID uuid.UUID) error {
	if p.IsSuperAdmin {
		return nil
	}
	perms, err := rolePermissions(ctx, tx, targetRoleID)
	if err != nil {
		return err
	}
	var missing []string
	for _, perm := range perms {
		if !p.Can(perm.Key()) {
			missing = append(missing, perm.Key())
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return apperr.Forbiddenf("you cannot change a member who holds permissions you do not hold: %s", strings.Join(missing, ", "))
	}
	return nil
}

// ensureAdminEverywhere is ensureAdminRemains for every organization where
// userID holds the Admin role: deactivating or deleting an account removes
// its admin from all of them. Organizations are locked in id order, so two
// such changes cannot deadlock. Callers have passed checkAccountChange, so the
// caller belongs to every organization named in the answer.
func ensureAdminEverywhere(ctx context.Context, tx *gorm.DB, currentOrg, userID uuid.UUID) error {
	var orgs []struct {
		OrganizationID uuid.UUID
		Name           string
	}
	err := tx.WithContext(ctx).Raw(`
SELECT m.organization_id, o.name
FROM organization_members m
JOIN roles r ON r.id = m.role_id AND r.is_system AND r.name = ?
JOIN organizations o ON o.id = m.organization_id
WHERE m.user_id = ?
ORDER BY m.organization_id`, RoleAdmin, userID).Scan(&orgs).Error
	if err != nil {
		return err
	}
	for _, o := range orgs {
		err := ensureAdminRemains(ctx, tx, o.OrganizationID, userID)
		if errors.Is(err, errLastAdmin) && o.OrganizationID != currentOrg {
			return apperr.Conflictf("this user is the last active admin of organization %q; an organization must keep at least one active admin", o.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
