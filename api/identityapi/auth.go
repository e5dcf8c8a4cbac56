package identityapi

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/authguard"
)

func (h *Handlers) register(c *gin.Context) {
	var req registerRequest
	if !web.BindJSON(c, &req) {
		return
	}
	sess, err := h.ids.Register(c.Request.Context(), identity.RegisterInput{Email: req.Email, Password: req.Password,
		FullName: req.FullName, OrganizationID: req.OrganizationID})
	if err != nil {
		web.Fail(c, err)
		return
	}
	p := sess.Principal
	web.Created(c, newSession(sess, registeredUser{ID: p.UserID, Email: p.Email, FullName: p.FullName, OrganizationID: p.OrgID,
		Role: roleRef{ID: p.RoleID, Name: p.RoleName}}, false))
}

func (h *Handlers) login(c *gin.Context) {
	var req loginRequest
	if !web.BindJSON(c, &req) {
		return
	}
	// A console sign-in from another site is refused before anything is
	// checked or counted.
	if req.Cookie && !h.fromConsole(c) {
		return
	}
	// Failed sign-ins are counted per (email, address) pair and per
	// address; a locked attempt is refused before its password is checked,
	// whether or not it is right, so the 429 tells a guesser nothing.
	ctx := c.Request.Context()
	attempt := authguard.Attempt{Account: req.Email, Address: c.ClientIP()}
	if locked, retry, err := h.loginGuard.Locked(ctx, attempt); err != nil {
		web.Log(c).Warn("sign-in guard unavailable; attempt allowed", "error", err)
	} else if locked {
		secs := int(retry.Seconds() + 0.999)
		c.Header("Retry-After", strconv.Itoa(secs))
		web.Fail(c, apperr.TooManyf("too many failed sign-in attempts; retry in %d seconds", secs))
		return
	}
	sess, err := h.ids.Login(ctx, req.Email, req.Password)
	if apperr.Is(err, apperr.Unauthorized) {
		if ferr := h.loginGuard.Fail(ctx, attempt); ferr != nil {
			web.Log(c).Warn("cannot count a failed sign-in", "error", ferr)
		}
	}
	if err != nil {
		web.Fail(c, err)
		return
	}
	if req.Cookie {
		h.setRefreshCookie(c, sess)
	}
	p := sess.Principal
	web.OK(c, newSession(sess, loginUser{ID: p.UserID, Email: p.Email, Name: p.FullName, OrganizationID: p.OrgID}, req.Cookie))
}

// refreshToken is the token a refresh or logout acts on: the body's, else
// the console's cookie (viaCookie), which only this service's pages may
// use. ok is false when the request was refused (answered).
func (h *Handlers) refreshToken(c *gin.Context) (token string, viaCookie, ok bool) {
	var req refreshTokenRequest
	if !web.BindJSON(c, &req) {
		return "", false, false
	}
	if req.RefreshToken != "" {
		return req.RefreshToken, false, true
	}
	if token = cookieToken(c); token == "" {
		return "", false, true // no token at all: the domain's answer, as before the cookie existed
	}
	if !h.fromConsole(c) {
		return "", false, false
	}
	return token, true, true
}

func (h *Handlers) refresh(c *gin.Context) {
	token, viaCookie, ok := h.refreshToken(c)
	if !ok {
		return
	}
	sess, err := h.ids.Refresh(c.Request.Context(), token)
	if err != nil {
		// A refused cookie (spent, revoked, expired) can never work again.
		if viaCookie && apperr.Is(err, apperr.Unauthorized) {
			h.clearRefreshCookie(c)
		}
		web.Fail(c, err)
		return
	}
	out := tokensResp{AccessToken: sess.AccessToken, RefreshToken: sess.RefreshToken, ExpiresIn: sess.ExpiresIn}
	if viaCookie {
		h.setRefreshCookie(c, sess)
		out.RefreshToken = ""
	}
	web.OK(c, out)
}

func (h *Handlers) logout(c *gin.Context) {
	token, viaCookie, ok := h.refreshToken(c)
	if !ok {
		return
	}
	if err := h.ids.Logout(c.Request.Context(), token); err != nil {
		web.Fail(c, err)
		return
	}
	if viaCookie {
		h.clearRefreshCookie(c)
	}
	web.Message(c, "logged out")
}

func (h *Handlers) switchOrg(c *gin.Context) {
	var req switchOrgRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.Cookie && !h.fromConsole(c) {
		return
	}
	ctx := c.Request.Context()
	sess, err := h.ids.SwitchOrg(ctx, web.Principal(c), req.OrganizationID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if req.Cookie {
		// The cookie's session is replaced, so it ends: nobody could use it
		// again, and an unused live session is only a risk.
		if old := cookieToken(c); old != "" {
			if err := h.ids.Logout(ctx, old); err != nil {
				web.Log(c).Warn("cannot revoke the session a console switch replaced", "error", err)
			}
		}
		h.setRefreshCookie(c, sess)
	}
	p := sess.Principal
	u := switchedUser{ID: p.UserID, Email: p.Email, FullName: p.FullName, OrganizationID: p.OrgID}
	u.Role.ID, u.Role.Name, u.Role.Permissions = p.RoleID, p.RoleName, []permissionRef{}
	for _, k := range p.PermissionList() {
		res, act, _ := cutKey(k)
		u.Role.Permissions = append(u.Role.Permissions, permissionRef{Resource: res, Action: act})
	}
	web.OK(c, newSession(sess, u, req.Cookie))
}

// cutKey splits a permission key at its last colon: "a:b:read" is resource
// "a:b", action "read".
func cutKey(k string) (resource, action string, found bool) {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == ':' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

func (h *Handlers) me(c *gin.Context) {
	p := web.Principal(c)
	// Availability is read, not taken from the principal: the principal
	// cache does not follow it.
	available, err := h.ids.Available(c.Request.Context(), p.UserID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	r := meResp{ID: p.UserID, Email: p.Email, FullName: p.FullName, OrganizationID: p.OrgID,
		Permissions: p.PermissionList(), IsSuperAdmin: p.IsSuperAdmin, IsAvailable: available, CreatedAt: web.UTC(p.CreatedAt)}
	r.Role.ID, r.Role.Name, r.Role.Description = p.RoleID, p.RoleName, p.RoleDescription
	web.OK(c, r)
}

func (h *Handlers) changePassword(c *gin.Context) {
	var req changePasswordRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if err := h.ids.ChangePassword(c.Request.Context(), web.Principal(c), req.CurrentPassword, req.NewPassword); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "password updated")
}

func (h *Handlers) myOrganizations(c *gin.Context) {
	ms, err := h.ids.MyOrganizations(c.Request.Context(), web.Principal(c))
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := make([]membershipResp, len(ms))
	for i, m := range ms {
		out[i] = membershipResp(m)
	}
	web.OK(c, myOrganizationsResp{Organizations: out})
}
