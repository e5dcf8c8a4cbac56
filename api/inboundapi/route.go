package inboundapi

import (
	"net/http"

	"wharf/api/web"
	"wharf/platform"
)

// Routes lists the provider's webhook routes: public (the request is
// verified by its signature) and never rate limited. It reads no field of
// h, so a nil *Handlers lists the table too (documentation, OpenAPI).
//
// The document framework's integration registers the same webhook with the
// provider at /api/method/wharf.utils.webhook.webhook (alias
// /api/method/wharf.webhook): the same handlers, the same intake, and the
// provider's answers (not Frappe's error shape).
func (h *Handlers) Routes() []web.Route {
	rows := h.routes("/api/webhook")
	for _, p := range []string{"/api/method/wharf.utils.webhook.webhook", "/api/method/wharf.webhook"} {
		for _, r := range h.routes(p) {
			r.Summary += " (the framework integration's address)"
			rows = append(rows, r)
		}
	}
	return rows
}

func (h *Handlers) routes(path string) []web.Route {
	return []web.Route{
		{Method: "GET", Path: path, Access: web.Public(), Unlimited: true, Handler: h.verify,
			Summary: "The provider's subscription handshake: echoes hub.challenge in plain text", Query: verifyQuery{},
			Response: "", Produces: "text/plain", Errors: []int{http.StatusForbidden}},
		{Method: "POST", Path: path, Access: web.Public(), Unlimited: true, Handler: h.receive,
			Summary: "Receive the provider's signed webhook: stored, then processed by the worker",
			Request: platform.WebhookPayload{}, Response: receivedResp{},
			// A bad signature, and an address past its failure limit.
			Errors: []int{http.StatusUnauthorized, http.StatusTooManyRequests}},
	}
}
