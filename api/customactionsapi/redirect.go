package customactionsapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
)

// redirect is opened by the browser without credentials: the token is
// the credential, and it works once. Neither answer may be cached, and
// the target is not told where the browser came from (no Referer).
func (h *Handlers) redirect(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	c.Header("Referrer-Policy", "no-referrer")
	target, err := h.actions.Redirect(c.Request.Context(), c.Param("token"))
	if err != nil {
		web.Fail(c, err)
		return
	}
	c.Redirect(http.StatusFound, target)
}
