package pflowsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
	"wharf/internal/pflows"
)

func (h *Handlers) send(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req sendRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if req.ContactID == "" {
		web.Fail(c, apperr.Invalidf("contact_id is required"))
		return
	}
	contactID, err := web.OptionalUUID("contact_id", &req.ContactID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	ctx, p := c.Request.Context(), web.Principal(c)
	f, err := h.flows.Sendable(ctx, p.OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	waba, err := h.flows.BusinessAccountID(ctx, f)
	if err != nil {
		web.Fail(c, err)
		return
	}
	screen := req.Screen
	if screen == "" {
		screen = pflows.FirstScreen(f)
	}
	sent, err := h.messaging.SendFlow(ctx, p.OrgID, messaging.Actor{UserID: p.UserID, APIKeyID: p.APIKeyID}, *contactID, messaging.FlowMessage{
		FlowID: f.ID, ProviderFlowID: *f.ProviderFlowID, BusinessAccountID: waba, Body: req.Body, CTA: req.CTA, Header: req.Header,
		Footer: req.Footer, Screen: screen, Data: req.Data, FlowToken: req.FlowToken})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, sentResp{ID: sent.ID, PlatformMessageID: sent.PlatformMessageID, Status: string(sent.Status)})
}
