package accountsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/accounts"
)

func (h *Handlers) embeddedSignupConfig(c *gin.Context) {
	cfg, err := h.accounts.EmbeddedSignupConfig(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, signupConfigResp{PlatformAppID: cfg.AppID, PlatformConfigID: cfg.ConfigID, PlatformAPIVersion: cfg.APIVersion,
		ScriptURL: h.signupScript, Configured: cfg.Configured})
}

func (h *Handlers) exchangeToken(c *gin.Context) {
	var req exchangeTokenRequest
	if !web.BindJSON(c, &req) {
		return
	}
	o, err := h.accounts.ExchangeToken(c.Request.Context(), web.Principal(c).OrgID, accounts.ExchangeInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toOnboardedResp(o))
}

func (h *Handlers) register(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req registerRequest
	if c.Request.ContentLength != 0 && !web.BindJSON(c, &req) {
		return
	}
	o, err := h.accounts.Register(c.Request.Context(), web.Principal(c).OrgID, id, req.PIN)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toOnboardedResp(o))
}

func (h *Handlers) subscribe(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.accounts.Subscribe(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "the provider sends the account's webhooks here")
}
