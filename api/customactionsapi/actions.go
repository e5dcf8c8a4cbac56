package customactionsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
)

func (h *Handlers) list(c *gin.Context) {
	rows, err := h.actions.List(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := listResp{CustomActions: make([]actionResp, len(rows))}
	for i, a := range rows {
		out.CustomActions[i] = toActionResp(a)
	}
	web.OK(c, out)
}

func (h *Handlers) get(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	a, err := h.actions.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toActionResp(*a))
}

func (h *Handlers) create(c *gin.Context) {
	var req actionRequest
	if !web.BindJSON(c, &req) {
		return
	}
	p := web.Principal(c)
	a, err := h.actions.Create(c.Request.Context(), p.OrgID, &p.UserID, req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toActionResp(*a))
}

func (h *Handlers) update(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req actionRequest
	if !web.BindJSON(c, &req) {
		return
	}
	a, err := h.actions.Update(c.Request.Context(), web.Principal(c).OrgID, id, req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toActionResp(*a))
}

func (h *Handlers) delete(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.actions.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, deleteResp{Status: "deleted"})
}
