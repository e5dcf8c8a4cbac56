package transfersapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/transfers"
)

// respond answers one transfer through the organization's masker.
func (h *Handlers) respond(c *gin.Context, status int, v *transfers.View) {
	m, err := h.maskers.Masker(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Respond(c, status, toTransferResp(m, *v))
}

func (h *Handlers) list(c *gin.Context) {
	pg, ok := web.Paging(c, 50, 200)
	if !ok {
		return
	}
	p := web.Principal(c)
	page, err := h.transfers.List(c.Request.Context(), p.OrgID, caller(c), transfers.Filter{Status: c.Query("status"), Queue: c.Query("team_id")}, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, err := h.maskers.Masker(c.Request.Context(), p.OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := listResp{Transfers: make([]transferResp, len(page.Items)), GeneralQueueCount: page.GeneralQueueCount,
		TeamQueueCounts: page.TeamQueueCounts, Total: page.Total, Page: pg.Page, Limit: pg.Limit}
	for i, v := range page.Items {
		out.Transfers[i] = toTransferResp(m, v)
	}
	web.OK(c, out)
}

func (h *Handlers) create(c *gin.Context) {
	var req createRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.ContactID == nil || *req.ContactID == "" {
		web.Fail(c, apperr.Invalidf("contact_id is required"))
		return
	}
	contactID, err := web.OptionalUUID("contact_id", req.ContactID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	teamID, err := web.OptionalUUID("team_id", req.TeamID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	p := web.Principal(c)
	v, created, err := h.transfers.CreateFor(c.Request.Context(), p.OrgID, caller(c), transfers.CreateInput{ContactID: *contactID, TeamID: teamID,
		Notes: req.Notes, CreatedBy: &p.UserID})
	if err != nil {
		web.Fail(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	h.respond(c, status, v)
}

func (h *Handlers) get(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	v, err := h.transfers.GetFor(c.Request.Context(), web.Principal(c).OrgID, caller(c), id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.respond(c, http.StatusOK, v)
}

func (h *Handlers) pickup(c *gin.Context) {
	v, err := h.transfers.Pickup(c.Request.Context(), web.Principal(c).OrgID, caller(c), c.Query("team_id"))
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.respond(c, http.StatusOK, v)
}

func (h *Handlers) assign(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req assignRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.AgentID == nil || *req.AgentID == "" {
		web.Fail(c, apperr.Invalidf("agent_id is required"))
		return
	}
	agent, err := web.OptionalUUID("agent_id", req.AgentID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	v, err := h.transfers.Assign(c.Request.Context(), web.Principal(c).OrgID, id, *agent)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.respond(c, http.StatusOK, v)
}

func (h *Handlers) resume(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	v, err := h.transfers.Resume(c.Request.Context(), web.Principal(c).OrgID, caller(c), id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.respond(c, http.StatusOK, v)
}
