package inboundapi

import (
	"net/http"

	"wharf/api/web"
	"wharf/platform"
)

// Routes lists the provider's webhook routes: public (the request is
// verified by its signature) and never rate limited. It reads no field of
// h, so a nil *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/webhook", Access: web.Public(), Unlimited: true, Handler: h.verify,
			Summary: "The provider's subscription handshake: echoes hub.challenge in plain text", Query: verifyQuery{},
			Response: "", Produces: "text/plain", Errors: []int{http.StatusForbidden}},
		{Method: "POST", Path: "/api/webhook", Access: web.Public(), Unlimited: true, Handler: h.receive,
			Summary: "Receive the provider's signed webhook: stored, then processed by the worker",
			Request: platform.WebhookPayload{}, Response: receivedResp{},
			// A bad signature, and an address past its failure limit.
			Errors: []int{http.StatusUnauthorized, http.StatusTooManyRequests}},
	}
}
