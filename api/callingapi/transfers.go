package callingapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/calling"
	"wharf/models"
)

func (h *Handlers) listTransfers(c *gin.Context) {
	pg, ok := web.Paging(c, 20, 100)
	if !ok {
		return
	}
	rows, total, err := h.calls.ListTransfers(c.Request.Context(), web.Principal(c).OrgID, c.Query("status"), pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, ok := h.masker(c)
	if !ok {
		return
	}
	web.OK(c, transfersResp{CallTransfers: toTransfers(m, rows), Total: total, Page: pg.Page, Limit: pg.Limit})
}

func (h *Handlers) getTransfer(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	t, err := h.calls.GetTransfer(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, ok := h.masker(c)
	if !ok {
		return
	}
	web.OK(c, toTransferResp(m, t))
}

func (h *Handlers) connect(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req connectRequest
	if !web.BindJSON(c, &req) {
		return
	}
	offer, err := sdpOffer(req.SDPOffer)
	if err != nil {
		web.Fail(c, err)
		return
	}
	answer, err := h.calls.Connect(c.Request.Context(), caller(c), id, offer)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, connectResp{SDPAnswer: answer})
}

func (h *Handlers) hangupTransfer(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.calls.HangupTransfer(c.Request.Context(), caller(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, statusResp{Status: models.TransferCompleted})
}

func (h *Handlers) initiate(c *gin.Context) {
	var req initiateRequest
	if !web.BindJSON(c, &req) {
		return
	}
	callID, err := requiredUUID("call_log_id", req.CallLogID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	teamID, err := requiredUUID("team_id", req.TeamID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	agentID, err := web.OptionalUUID("agent_id", req.AgentID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if err := h.calls.InitiateTransfer(c.Request.Context(), caller(c),
		calling.TransferInput{CallLogID: callID, TeamID: teamID, AgentID: agentID}); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, statusResp{Status: models.CallTransferring})
}
