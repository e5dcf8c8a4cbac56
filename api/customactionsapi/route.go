package customactionsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the custom actions routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI). The spec names
// no permission for custom actions: custom_actions:read lists them,
// :execute runs them, :create, :update and :delete manage them.
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/custom-actions", Access: web.Perm("custom_actions:read"), Handler: h.list,
			Summary: "List custom actions in button order (display_order, then name)", Response: listResp{}},
		{Method: "GET", Path: "/api/custom-actions/:id", Access: web.Perm("custom_actions:read"), Handler: h.get,
			Summary: "Get a custom action", Response: actionResp{}},
		{Method: "POST", Path: "/api/custom-actions", Access: web.Perm("custom_actions:create"), Handler: h.create,
			Summary: "Create a custom action", Request: actionRequest{}, Response: actionResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/custom-actions/:id", Access: web.Perm("custom_actions:update"), Handler: h.update,
			Summary: "Update a custom action (the fields given; the result is checked as a whole)", Request: actionRequest{}, Response: actionResp{}},
		{Method: "DELETE", Path: "/api/custom-actions/:id", Access: web.Perm("custom_actions:delete"), Handler: h.delete,
			Summary: "Delete a custom action", Response: deleteResp{}},
		{Method: "POST", Path: "/api/custom-actions/:id/execute", Access: web.Perm("custom_actions:execute"), Handler: h.execute,
			Summary: "Run a custom action for a contact", Request: executeRequest{}, Response: executeResp{}},
		{Method: "GET", Path: "/api/custom-actions/redirect/:token", Access: web.Public(), Handler: h.redirect,
			Summary: "Open a URL action's one-time link: redirects (302) to its URL once; used, expired or unknown links are 404",
			Status:  http.StatusFound, Produces: "text/html"},
	}
}
