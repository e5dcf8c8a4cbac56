package cannedapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the canned responses routes. It reads no field of h, so a
// nil *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/canned-responses", Access: web.Perm("canned_responses:read"), Handler: h.list,
			Summary: "List canned responses, most used first", Query: listQuery{}, Response: listResp{}},
		{Method: "GET", Path: "/api/canned-responses/:id", Access: web.Perm("canned_responses:read"), Handler: h.get,
			Summary: "Get a canned response", Response: cannedResp{}},
		{Method: "POST", Path: "/api/canned-responses", Access: web.Perm("canned_responses:create"), Handler: h.create,
			Summary: "Create a canned response", Request: cannedRequest{}, Response: cannedResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/canned-responses/:id", Access: web.Perm("canned_responses:update"), Handler: h.update,
			Summary: "Update a canned response", Request: cannedRequest{}, Response: cannedResp{}},
		{Method: "DELETE", Path: "/api/canned-responses/:id", Access: web.Perm("canned_responses:delete"), Handler: h.delete,
			Summary: "Delete a canned response", Response: web.MessageResp{}},
		{Method: "POST", Path: "/api/canned-responses/:id/use", Access: web.Perm("canned_responses:read"), Handler: h.use,
			Summary: "Count a use of a canned response and get its content, filled for a contact", Request: useRequest{}, Response: useResp{}},
	}
}
