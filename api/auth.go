package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/authguard"
	"wharf/internal/identity"
)

type sessionResp struct {
	User         any    `json:"user"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
}

type roleRef struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

func (s *Server) register(c *gin.Context) {
	var req struct {
		Email          string `json:"email"`
		Password       string `json:"password"`
		FullName       string `json:"full_name"`
		OrganizationID string `json:"organization_id"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	sess, err := s.identity.Register(c.Request.Context(), identity.RegisterInput{Email: req.Email, Password: req.Password,
		FullName: req.FullName, OrganizationID: req.OrganizationID})
	if err != nil {
		s.fail(c, err)
		return
	}
	p := sess.Principal
	ok(c, http.StatusCreated, sessionResp{
		User: gin.H{"id": p.UserID, "email": p.Email, "full_name": p.FullName, "organization_id": p.OrgID,
			"role": roleRef{ID: p.RoleID, Name: p.RoleName}},
		AccessToken: sess.AccessToken, RefreshToken: sess.RefreshToken, ExpiresIn: sess.ExpiresIn,
	})
}

func (s *Server) login(c *gin.Context) {
	var req struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	// Failed sign-ins are counted per (email, address) pair and per
	// address; a locked attempt is refused before its password is checked,
	// whether or not it is right, so the 429 tells a guesser nothing.
	ctx := c.Request.Context()
	attempt := authguard.Attempt{Account: req.Email, Address: c.ClientIP()}
	if locked, retry, err := s.loginGuard.Locked(ctx, attempt); err != nil {
		s.log.Warn("sign-in guard unavailable; attempt allowed", "error", err)
	} else if locked {
		secs := int(retry.Seconds() + 0.999)
		c.Header("Retry-After", strconv.Itoa(secs))
		s.fail(c, apperr.TooManyf("too many failed sign-in attempts; retry in %d seconds", secs))
		return
	}
	sess, err := s.identity.Login(ctx, req.Email, req.Password)
	if apperr.Is(err, apperr.Unauthorized) {
		if ferr := s.loginGuard.Fail(ctx, attempt); ferr != nil {
			s.log.Warn("cannot count a failed sign-in", "error", ferr)
		}
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	p := sess.Principal
	ok(c, http.StatusOK, sessionResp{
		User:        gin.H{"id": p.UserID, "email": p.Email, "name": p.FullName, "organization_id": p.OrgID},
		AccessToken: sess.AccessToken, RefreshToken: sess.RefreshToken, ExpiresIn: sess.ExpiresIn,
	})
}

func (s *Server) refresh(c *gin.Context) {
	var req struct {
		RefreshToken string `json:"refresh_token"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	sess, err := s.identity.Refresh(c.Request.Context(), req.RefreshToken)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"access_token": sess.AccessToken, "refresh_token": sess.RefreshToken, "expires_in": sess.ExpiresIn})
}

func (s *Server) logout(c *gin.Context) {
	var req struct {
		RefreshToken string `json:"refresh_token"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	if err := s.identity.Logout(c.Request.Context(), req.RefreshToken); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "logged out")
}

type permissionRef struct {
	Resource string `json:"resource"`
	Action   string `json:"action"`
}

func (s *Server) switchOrg(c *gin.Context) {
	var req struct {
		OrganizationID string `json:"organization_id"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	sess, err := s.identity.SwitchOrg(c.Request.Context(), principal(c), req.OrganizationID)
	if err != nil {
		s.fail(c, err)
		return
	}
	p := sess.Principal
	perms := []permissionRef{}
	for _, k := range p.PermissionList() {
		res, act, _ := cutKey(k)
		perms = append(perms, permissionRef{Resource: res, Action: act})
	}
	ok(c, http.StatusOK, sessionResp{
		User: gin.H{"id": p.UserID, "email": p.Email, "full_name": p.FullName, "organization_id": p.OrgID,
			"role": gin.H{"id": p.RoleID, "name": p.RoleName, "permissions": perms}},
		AccessToken: sess.AccessToken, RefreshToken: sess.RefreshToken, ExpiresIn: sess.ExpiresIn,
	})
}

func cutKey(k string) (resource, action string, found bool) {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == ':' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
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
	CreatedAt    time.Time `json:"created_at"`
}

func (s *Server) me(c *gin.Context) {
	p := principal(c)
	r := meResp{ID: p.UserID, Email: p.Email, FullName: p.FullName, OrganizationID: p.OrgID,
		Permissions: p.PermissionList(), IsSuperAdmin: p.IsSuperAdmin, CreatedAt: utc(p.CreatedAt)}
	r.Role.ID, r.Role.Name, r.Role.Description = p.RoleID, p.RoleName, p.RoleDescription
	ok(c, http.StatusOK, r)
}

func (s *Server) changePassword(c *gin.Context) {
	var req struct {
		CurrentPassword string `json:"current_password"`
		NewPassword     string `json:"new_password"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	if err := s.identity.ChangePassword(c.Request.Context(), principal(c), req.CurrentPassword, req.NewPassword); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "password updated")
}

type membershipResp struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	Name           string    `json:"name"`
	Slug           string    `json:"slug"`
	RoleName       string    `json:"role_name"`
	RoleID         uuid.UUID `json:"role_id"`
	IsDefault      bool      `json:"is_default"`
}

func (s *Server) myOrganizations(c *gin.Context) {
	ms, err := s.identity.MyOrganizations(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]membershipResp, len(ms))
	for i, m := range ms {
		out[i] = membershipResp(m)
	}
	ok(c, http.StatusOK, gin.H{"organizations": out})
}
