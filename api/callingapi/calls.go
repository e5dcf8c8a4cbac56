package callingapi

import (
	"strings"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/calling"
)

func (h *Handlers) outgoing(c *gin.Context) {
	var req outgoingRequest
	if !web.BindJSON(c, &req) {
		return
	}
	contactID, err := requiredUUID("contact_id", req.ContactID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	account := strings.TrimSpace(req.PlatformAccount)
	if err := requireAccount(account); err != nil {
		web.Fail(c, err)
		return
	}
	offer, err := sdpOffer(req.SDPOffer)
	if err != nil {
		web.Fail(c, err)
		return
	}
	callID, answer, err := h.calls.Outgoing(c.Request.Context(), caller(c),
		calling.OutgoingInput{ContactID: contactID, PlatformAccount: account, SDPOffer: offer})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, outgoingResp{CallLogID: callID, SDPAnswer: answer})
}

func (h *Handlers) hangupOutgoing(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.calls.HangupOutgoing(c.Request.Context(), caller(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, statusResp{Status: "ok"})
}

func (h *Handlers) requestPermission(c *gin.Context) {
	var req permissionRequest
	if !web.BindJSON(c, &req) {
		return
	}
	contactID, err := requiredUUID("contact_id", req.ContactID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	account := strings.TrimSpace(req.PlatformAccount)
	if err := requireAccount(account); err != nil {
		web.Fail(c, err)
		return
	}
	id, err := h.calls.RequestPermission(c.Request.Context(), web.Principal(c).OrgID, contactID, account)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, permissionRequestResp{PermissionID: id})
}

func (h *Handlers) permission(c *gin.Context) {
	contactID, ok := web.PathID(c, "contactId")
	if !ok {
		return
	}
	account := strings.TrimSpace(c.Query("platform_account"))
	if err := requireAccount(account); err != nil {
		web.Fail(c, err)
		return
	}
	status, exp, err := h.calls.PermissionStatus(c.Request.Context(), web.Principal(c).OrgID, contactID, account)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, permissionResp{Status: status, ExpiresAt: web.UTCPtr(exp)})
}

func (h *Handlers) iceServers(c *gin.Context) {
	servers := h.calls.ICEServers(web.Principal(c).UserID)
	out := iceResp{ICEServers: make([]iceServer, len(servers))}
	for i, s := range servers {
		out.ICEServers[i] = iceServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential}
	}
	web.OK(c, out)
}
