package identityapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
)

func (h *Handlers) listPermissions(c *gin.Context) {
	ps, err := h.ids.Permissions(c.Request.Context())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, permissionsResp{Permissions: toPermissionResps(ps)})
}

func (h *Handlers) listRoles(c *gin.Context) {
	roles, err := h.ids.ListRoles(c.Request.Context(), web.Principal(c).OrgID, c.Query("search"))
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := make([]roleResp, len(roles))
	for i, r := range roles {
		out[i] = toRoleResp(r, false)
	}
	web.OK(c, rolesResp{Roles: out})
}

func (h *Handlers) getRole(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	r, err := h.ids.Role(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toRoleResp(*r, true))
}

func (h *Handlers) createRole(c *gin.Context) {
	var req roleRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r, err := h.ids.CreateRole(c.Request.Context(), web.Principal(c), req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toRoleResp(*r, true))
}

func (h *Handlers) updateRole(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req roleRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r, err := h.ids.UpdateRole(c.Request.Context(), web.Principal(c), id, req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toRoleResp(*r, true))
}

func (h *Handlers) deleteRole(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.ids.DeleteRole(c.Request.Context(), web.Principal(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "role deleted")
}
