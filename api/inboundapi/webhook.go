package inboundapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/platform"
)

// verify answers the provider's subscription handshake in plain text.
func (h *Handlers) verify(c *gin.Context) {
	challenge, err := h.inbound.Verify(c.Request.Context(), c.Query("hub.mode"), c.Query("hub.verify_token"), c.Query("hub.challenge"))
	if err != nil {
		web.Fail(c, err)
		return
	}
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(challenge))
}

// receive verifies, stores and acknowledges a provider webhook; processing
// happens in the worker. The domain reads the body only once the client
// address has passed its failure limit.
func (h *Handlers) receive(c *gin.Context) {
	n, err := h.inbound.Intake(c.Request.Context(), c.ClientIP(), c.GetHeader(platform.SignatureHeader), c.Request.Body)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, receivedResp{Received: n})
}
