package webhooksapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the outbound webhooks routes. It reads no field of h, so a
// nil *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/webhooks", Access: web.Perm("webhooks:read"), Handler: h.list,
			Summary: "List the organization's webhooks and the events they can subscribe to", Response: webhooksResp{}},
		{Method: "POST", Path: "/api/webhooks", Access: web.Perm("webhooks:create"), Handler: h.create,
			Summary: "Create a webhook", Request: webhookRequest{}, Response: webhookResp{}, Status: http.StatusCreated},
		{Method: "GET", Path: "/api/webhooks/:id", Access: web.Perm("webhooks:read"), Handler: h.get,
			Summary: "Get a webhook", Response: webhookResp{}},
		{Method: "PUT", Path: "/api/webhooks/:id", Access: web.Perm("webhooks:update"), Handler: h.update,
			Summary: "Update a webhook", Request: webhookRequest{}, Response: webhookResp{}},
		{Method: "DELETE", Path: "/api/webhooks/:id", Access: web.Perm("webhooks:delete"), Handler: h.delete,
			Summary: "Delete a webhook", Response: web.MessageResp{}},
		{Method: "POST", Path: "/api/webhooks/:id/test", Access: web.Perm("webhooks:update"), Handler: h.test,
			Summary: "Send a test event to the webhook and report the outcome", Response: testResp{}},
		{Method: "GET", Path: "/api/webhooks/:id/deliveries", Access: web.Perm("webhooks:read"), Handler: h.deliveries,
			Summary: "The webhook's 50 latest delivery attempts", Response: web.Items[deliveryResp]{}},
		{Method: "POST", Path: "/api/webhooks/:id/deliveries/:deliveryId/redeliver", Access: web.Perm("webhooks:update"), Handler: h.redeliver,
			Summary:  "Send a logged delivery's event to the webhook again, now, and log the attempt (no retries follow)",
			Response: deliveryResp{}, Errors: []int{http.StatusConflict}},
	}
}
