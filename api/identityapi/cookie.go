package identityapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
)

// The web console keeps its refresh token in a cookie that its JavaScript
// cannot read: HttpOnly, SameSite=Strict, sent only to /api/auth, Secure
// when the console was reached over HTTPS. A sign-in or an organization
// switch asks for it with "cookie": true; refresh and logout use it when
// their body names no token. Every request that sets or uses the cookie
// must carry an Origin header naming this service (web.Origins), so that
// no other site can make a browser sign in, refresh or sign out with it,
// whatever SameSite a browser applies. API clients keep sending tokens in
// the body, and a body token is used as before, whatever cookie comes
// with it.
const (
	refreshCookie = "wharf_refresh"
	cookiePath    = "/api/auth"
)

// errCrossSite refuses a cookie request whose Origin is absent or foreign.
var errCrossSite = apperr.Forbiddenf("cross-site request refused: the console's session cookie is accepted only from this service's own pages (Origin header)")

// fromConsole checks that a cookie request comes from this service's own
// pages, answering 403 otherwise.
func (h *Handlers) fromConsole(c *gin.Context) bool {
	if h.origins.FromOrigin(c) {
		return true
	}
	web.Fail(c, errCrossSite)
	return false
}

// setRefreshCookie hands the session's refresh token to the browser.
func (h *Handlers) setRefreshCookie(c *gin.Context, sess *identity.Session) {
	http.SetCookie(c.Writer, &http.Cookie{Name: refreshCookie, Value: sess.RefreshToken, Path: cookiePath,
		Expires: sess.RefreshExpiresAt, MaxAge: max(1, int(time.Until(sess.RefreshExpiresAt).Seconds())),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: h.origins.Secure(c)})
}

// clearRefreshCookie makes the browser drop the cookie.
func (h *Handlers) clearRefreshCookie(c *gin.Context) {
	http.SetCookie(c.Writer, &http.Cookie{Name: refreshCookie, Value: "", Path: cookiePath, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: h.origins.Secure(c)})
}

// cookieToken is the refresh token of the request's cookie, "" when none.
func cookieToken(c *gin.Context) string {
	v, err := c.Cookie(refreshCookie)
	if err != nil {
		return ""
	}
	return v
}
