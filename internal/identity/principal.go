package identity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
)

// Principal is who is making a request: a user acting in one organization,
// through a session token or through one of their API keys.
type Principal struct {
	UserID          uuid.UUID
	OrgID           uuid.UUID
	HomeOrgID       uuid.UUID
	Email           string
	FullName        string
	IsSuperAdmin    bool
	RoleID          uuid.UUID
	RoleName        string
	RoleDescription string
	CreatedAt       time.Time
	// APIKeyID is set when the request authenticated with an API key.
	APIKeyID *uuid.UUID

	perms map[string]bool
}

// Can reports whether the principal holds permission key (`resource:action`).
func (p *Principal) Can(key string) bool { return p.perms[key] }

// PermissionList returns the held keys, sorted.
func (p *Principal) PermissionList() []string {
	out := make([]string, 0, len(p.perms))
	for k := range p.perms {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// ViaAPIKey reports whether the principal authenticated with an API key.
func (p *Principal) ViaAPIKey() bool { return p.APIKeyID != nil }

// sessionOnly refuses an API-key principal. The router already keeps keys
// off these routes (SessionOnly); the domain refuses too, so that no other
// caller of the method can forget it. what completes "API keys cannot ...".
func sessionOnly(p *Principal, what string) error {
	if p.ViaAPIKey() {
		return apperr.Forbiddenf("API keys cannot %s; sign in as a user", what)
	}
	return nil
}

// principalRow is what loadPrincipal reads in one query.
type principalRow struct {
	UserID          uuid.UUID
	HomeOrgID       uuid.UUID
	Email           string
	FullName        string
	IsActive        bool
	IsSuperAdmin    bool
	CreatedAt       time.Time
	RoleID          *uuid.UUID
	RoleName        *string
	RoleDescription *string
	Permissions     *string
}

// loadPrincipal reads the user's current role and permissions in orgID. A
// super admin who is not a member acts with the organization's Admin role, so
// that support can step into any organization.
func loadPrincipal(ctx context.Context, db *gorm.DB, userID, orgID uuid.UUID) (*Principal, error) {
	var row principalRow
	err := db.WithContext(ctx).Raw(`
SELECT u.id AS user_id, u.organization_id AS home_org_id, u.email, u.full_name, u.is_active,
       u.is_super_admin, u.created_at, r.id AS role_id, r.name AS role_name,
       r.description AS role_description,
       (SELECT string_agg(p.resource || ':' || p.action, ',')
          FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id
         WHERE rp.role_id = r.id) AS permissions
FROM users u
LEFT JOIN organization_members m ON m.user_id = u.id AND m.organization_id = @org
LEFT JOIN roles r ON r.id = COALESCE(m.role_id,
       CASE WHEN u.is_super_admin THEN
         (SELECT id FROM roles WHERE organization_id = @org AND is_system AND name = 'Admin') END)
WHERE u.id = @user`, map[string]any{"org": orgID, "user": userID}).Scan(&row).Error
	if err != nil {
		return nil, err
	}
	if row.UserID == uuid.Nil {
		return nil, apperr.Unauthorizedf("user no longer exists")
	}
	if !row.IsActive {
		return nil, apperr.Unauthorizedf("user account is disabled")
	}
	if row.RoleID == nil {
		return nil, apperr.Unauthorizedf("user is not a member of this organization")
	}
	p := &Principal{
		UserID: row.UserID, OrgID: orgID, HomeOrgID: row.HomeOrgID, Email: row.Email,
		FullName: row.FullName, IsSuperAdmin: row.IsSuperAdmin, CreatedAt: row.CreatedAt,
		RoleID: *row.RoleID, RoleName: deref(row.RoleName), RoleDescription: deref(row.RoleDescription),
		perms: map[string]bool{},
	}
	if row.Permissions != nil && *row.Permissions != "" {
		for _, k := range strings.Split(*row.Permissions, ",") {
			p.perms[k] = true
		}
	}
	return p, nil
}

// Principal returns the principal for a user in an organization, as an
// access token names them.
func (s *Service) Principal(ctx context.Context, userID, orgID uuid.UUID) (*Principal, error) {
	return loadPrincipal(ctx, s.db, userID, orgID)
}

// AuthenticateAccessToken verifies a bearer token and loads its principal.
func (s *Service) AuthenticateAccessToken(ctx context.Context, raw string) (*Principal, error) {
	userID, orgID, err := s.tokens.ParseAccess(raw)
	if err != nil {
		return nil, err
	}
	return s.principal(ctx, userID, orgID)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func notFound(err error, msg string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return apperr.NotFoundf("%s", msg)
	}
	return err
}
