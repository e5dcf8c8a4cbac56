package identityapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/models"
)

// Query parameters.

type searchQuery struct {
	Search string `query:"search" description:"Case-insensitive text to look for."`
}

type searchPageQuery struct {
	web.PageQuery
	Search string `query:"search" description:"Case-insensitive text to look for."`
}

// Authentication and session.

type registerRequest struct {
	Email          string `json:"email"`
	Password       string `json:"password"`
	FullName       string `json:"full_name"`
	OrganizationID string `json:"organization_id"`
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	// Cookie is the console's sign-in (docs/API.md, "The console's session
	// cookie").
	Cookie bool `json:"cookie,omitempty" description:"true: keep the refresh token in an HttpOnly cookie (the web console); the answer then carries no refresh_token. Needs an Origin header naming this service."`
}

type refreshTokenRequest struct {
	RefreshToken string `json:"refresh_token,omitempty" description:"The refresh token. Absent: the console's session cookie is used, which needs an Origin header naming this service."`
}

type switchOrgRequest struct {
	OrganizationID string `json:"organization_id"`
	Cookie         bool   `json:"cookie,omitempty" description:"true: the new refresh token replaces the console's session cookie (whose session is revoked) and is not in the answer. Needs an Origin header naming this service."`
}

type changePasswordRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// sessionResp is a new session; each route that opens one describes the
// user its own way (as the spec shows them).
type sessionResp[U any] struct {
	User         U      `json:"user"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token,omitempty" description:"Absent when the session is kept in the console's cookie."`
	ExpiresIn    int    `json:"expires_in"`
}

// newSession is the answer of a new session; inCookie drops the refresh
// token, which the console's cookie carries instead.
func newSession[U any](sess *identity.Session, user U, inCookie bool) sessionResp[U] {
	r := sessionResp[U]{User: user, AccessToken: sess.AccessToken, RefreshToken: sess.RefreshToken, ExpiresIn: sess.ExpiresIn}
	if inCookie {
		r.RefreshToken = ""
	}
	return r
}

type roleRef struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

// registeredUser is the user of POST /api/auth/register.
type registeredUser struct {
	ID             uuid.UUID `json:"id"`
	Email          string    `json:"email"`
	FullName       string    `json:"full_name"`
	OrganizationID uuid.UUID `json:"organization_id"`
	Role           roleRef   `json:"role"`
}

// loginUser is the user of POST /api/auth/login (the spec names the full
// name "name" there).
type loginUser struct {
	ID             uuid.UUID `json:"id"`
	Email          string    `json:"email"`
	Name           string    `json:"name"`
	OrganizationID uuid.UUID `json:"organization_id"`
}

type permissionRef struct {
	Resource string `json:"resource"`
	Action   string `json:"action"`
}

// switchedUser is the user of POST /api/auth/switch-org, with the role's
// permissions in the new organization.
type switchedUser struct {
	ID             uuid.UUID `json:"id"`
	Email          string    `json:"email"`
	FullName       string    `json:"full_name"`
	OrganizationID uuid.UUID `json:"organization_id"`
	Role           struct {
		ID          uuid.UUID       `json:"id"`
		Name        string          `json:"name"`
		Permissions []permissionRef `json:"permissions"`
	} `json:"role"`
}

type tokensResp struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token,omitempty" description:"Absent when the session is kept in the console's cookie."`
	ExpiresIn    int    `json:"expires_in"`
}

type meResp struct {
	ID             uuid.UUID `json:"id"`
	Email          string    `json:"email"`
	FullName       string    `json:"full_name"`
	OrganizationID uuid.UUID `json:"organization_id"`
	Role           struct {
		ID          uuid.UUID `json:"id"`
		Name        string    `json:"name"`
		Description string    `json:"description"`
	} `json:"role"`
	Permissions  []string  `json:"permissions"`
	IsSuperAdmin bool      `json:"is_super_admin"`
	IsAvailable  bool      `json:"is_available" description:"Whether the user takes chats (PUT /api/users/{id}/availability)."`
	CreatedAt    time.Time `json:"created_at"`
}

type membershipResp struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	Name           string    `json:"name"`
	Slug           string    `json:"slug"`
	RoleName       string    `json:"role_name"`
	RoleID         uuid.UUID `json:"role_id"`
	IsDefault      bool      `json:"is_default"`
}

type myOrganizationsResp struct {
	Organizations []membershipResp `json:"organizations"`
}

// API keys.

type createAPIKeyRequest struct {
	Name      string  `json:"name"`
	ExpiresAt *string `json:"expires_at"`
}

type apiKeyResp struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Key        string     `json:"key,omitempty"` // only when created
	KeyPrefix  string     `json:"key_prefix"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	IsActive   bool       `json:"is_active"`
	CreatedAt  time.Time  `json:"created_at"`
}

func toAPIKeyResp(k models.APIKey, now time.Time) apiKeyResp {
	return apiKeyResp{ID: k.ID, Name: k.Name, KeyPrefix: k.KeyPrefix, LastUsedAt: web.UTCPtr(k.LastUsedAt),
		ExpiresAt: web.UTCPtr(k.ExpiresAt), IsActive: k.ExpiresAt == nil || k.ExpiresAt.After(now), CreatedAt: web.UTC(k.CreatedAt)}
}

// Users.

type createUserRequest struct {
	Email    string  `json:"email"`
	Password string  `json:"password"`
	FullName string  `json:"full_name"`
	RoleID   *string `json:"role_id"`
}

type updateUserRequest struct {
	Email    *string `json:"email"`
	Password *string `json:"password"`
	FullName *string `json:"full_name"`
	RoleID   *string `json:"role_id"`
	IsActive *bool   `json:"is_active"`
}

type availabilityRequest struct {
	IsAvailable *bool `json:"is_available"`
}

type userRoleResp struct {
	ID          uuid.UUID `json:"id"`
	Name        string    `json:"name"`
	IsSystem    bool      `json:"is_system"`
	Description string    `json:"description"`
}

type userResp struct {
	ID          uuid.UUID    `json:"id"`
	Email       string       `json:"email"`
	FullName    string       `json:"full_name"`
	RoleID      uuid.UUID    `json:"role_id"`
	Role        userRoleResp `json:"role"`
	IsActive    bool         `json:"is_active"`
	IsAvailable bool         `json:"is_available"`
	IsMember    bool         `json:"is_member"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

func toUserResp(u identity.UserView) userResp {
	return userResp{ID: u.ID, Email: u.Email, FullName: u.FullName, RoleID: u.RoleID,
		Role:     userRoleResp{ID: u.RoleID, Name: u.RoleName, IsSystem: u.RoleIsSystem, Description: u.RoleDescription},
		IsActive: u.IsActive, IsAvailable: u.IsAvailable, IsMember: u.IsMember,
		CreatedAt: web.UTC(u.CreatedAt), UpdatedAt: web.UTC(u.UpdatedAt)}
}

type usersPage struct {
	Users []userResp `json:"users"`
	Total int64      `json:"total"`
	Page  int        `json:"page"`
	Limit int        `json:"limit"`
}

// Roles and permissions.

type roleRequest struct {
	Name        *string   `json:"name"`
	Description *string   `json:"description"`
	Permissions *[]string `json:"permissions"`
	IsDefault   *bool     `json:"is_default"`
}

func (r roleRequest) input() identity.RoleInput {
	return identity.RoleInput{Name: r.Name, Description: r.Description, Permissions: r.Permissions, IsDefault: r.IsDefault}
}

type permissionResp struct {
	ID          uuid.UUID `json:"id"`
	Resource    string    `json:"resource"`
	Action      string    `json:"action"`
	Key         string    `json:"key"`
	Description string    `json:"description"`
}

func toPermissionResps(ps []models.Permission) []permissionResp {
	out := make([]permissionResp, len(ps))
	for i, p := range ps {
		out[i] = permissionResp{ID: p.ID, Resource: p.Resource, Action: p.Action, Key: p.Key(), Description: p.Description}
	}
	return out
}

type permissionsResp struct {
	Permissions []permissionResp `json:"permissions"`
}

type roleResp struct {
	ID              uuid.UUID        `json:"id"`
	Name            string           `json:"name"`
	Description     string           `json:"description"`
	IsSystem        bool             `json:"is_system"`
	IsDefault       bool             `json:"is_default"`
	PermissionCount int              `json:"permission_count"`
	Permissions     []permissionResp `json:"permissions,omitempty"` // one role's answers only
	CreatedAt       time.Time        `json:"created_at"`
	UpdatedAt       time.Time        `json:"updated_at"`
}

func toRoleResp(r identity.RoleView, detail bool) roleResp {
	out := roleResp{ID: r.ID, Name: r.Name, Description: r.Description, IsSystem: r.IsSystem, IsDefault: r.IsDefault,
		PermissionCount: r.PermissionCount, CreatedAt: web.UTC(r.CreatedAt), UpdatedAt: web.UTC(r.UpdatedAt)}
	if detail {
		out.Permissions = toPermissionResps(r.Permissions)
		if out.Permissions == nil {
			out.Permissions = []permissionResp{}
		}
	}
	return out
}

type rolesResp struct {
	Roles []roleResp `json:"roles"`
}

// Organizations and members.

type createOrgRequest struct {
	Name string `json:"name"`
}

type orgResp struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Slug      string    `json:"slug"`
	CreatedAt time.Time `json:"created_at"`
}

func toOrgResp(o models.Organization) orgResp {
	return orgResp{ID: o.ID, Name: o.Name, Slug: o.Slug, CreatedAt: web.UTC(o.CreatedAt)}
}

// currentOrgResp is the caller's organization with the settings every
// member needs to show times (the console formats them with these).
type currentOrgResp struct {
	orgResp
	Timezone   string `json:"timezone" description:"IANA time zone in which the organization shows times."`
	DateFormat string `json:"date_format" description:"How the organization writes dates, e.g. YYYY-MM-DD."`
}

type organizationsResp struct {
	Organizations []orgResp `json:"organizations"`
	Total         int       `json:"total"`
}

type addMemberRequest struct {
	UserID *string `json:"user_id"`
	Email  string  `json:"email"`
	RoleID *string `json:"role_id"`
}

type updateMemberRequest struct {
	RoleID *string `json:"role_id"`
}

type memberResp struct {
	ID             uuid.UUID `json:"id"`
	UserID         uuid.UUID `json:"user_id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	RoleID         uuid.UUID `json:"role_id"`
	RoleName       string    `json:"role_name"`
	IsDefault      bool      `json:"is_default"`
	Email          string    `json:"email"`
	FullName       string    `json:"full_name"`
	IsActive       bool      `json:"is_active"`
	CreatedAt      time.Time `json:"created_at"`
}

type membersPage struct {
	Members []memberResp `json:"members"`
	Total   int64        `json:"total"`
	Page    int          `json:"page"`
	Limit   int          `json:"limit"`
}
