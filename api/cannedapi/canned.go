package cannedapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/canned"
)

func (h *Handlers) list(c *gin.Context) {
	rows, err := h.canned.List(c.Request.Context(), web.Principal(c).OrgID, canned.Filter{Category: c.Query("category"),
		Search: c.Query("search"), ActiveOnly: c.Query("active_only") == "true"})
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := listResp{CannedResponses: make([]cannedResp, len(rows))}
	for i, r := range rows {
		out.CannedResponses[i] = toCannedResp(r)
	}
	web.OK(c, out)
}

func (h *Handlers) get(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	r, err := h.canned.Get(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toCannedResp(*r))
}

func (h *Handlers) create(c *gin.Context) {
	var req cannedRequest
	if !web.BindJSON(c, &req) {
		return
	}
	p := web.Principal(c)
	r, err := h.canned.Create(c.Request.Context(), p.OrgID, &p.UserID, canned.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toCannedResp(*r))
}

func (h *Handlers) update(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req cannedRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r, err := h.canned.Update(c.Request.Context(), web.Principal(c).OrgID, id, canned.Input(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toCannedResp(*r))
}

func (h *Handlers) delete(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.canned.Delete(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Canned response deleted")
}

// use takes an optional body: without one the content comes back unfilled.
func (h *Handlers) use(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req useRequest
	if c.Request.ContentLength != 0 {
		if !web.BindJSON(c, &req) {
			return
		}
	}
	contactID, err := web.OptionalUUID("contact_id", req.ContactID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	r, content, err := h.canned.Use(c.Request.Context(), web.Principal(c).OrgID, id, contactID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, useResp{Message: "Usage recorded", Content: content, UsageCount: r.UsageCount})
}
