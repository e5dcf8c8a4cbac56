package resourceapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/integration/docframe"
)

// method calls a whitelisted method (Frappe's /api/method/<dotted.name>)
// with the query's parameters and, for other verbs than GET, the body's
// keys as arguments.
func (h *Handlers) method(c *gin.Context) {
	args := map[string]any{}
	if c.Request.Method != http.MethodGet {
		in, err := readBody(c)
		if err != nil {
			fail(c, err)
			return
		}
		args = in
	}
	for k, vs := range c.Request.URL.Query() {
		if _, inBody := args[k]; !inBody && len(vs) > 0 {
			args[k] = vs[0]
		}
	}
	p := web.Principal(c)
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	res, err := h.frame.CallMethod(c.Request.Context(), c.Param("method"), c.Request.Method,
		&docframe.Call{Actor: a, OrganizationID: p.OrgID, Args: args})
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, methodResp{Message: res})
}
