package templatesapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the templates routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/templates", Access: web.Perm("templates:read"), Handler: h.list,
			Summary: "List the organization's templates, newest first", Query: listQuery{}, Response: web.Page[templateResp]{}},
		{Method: "GET", Path: "/api/templates/:id", Access: web.Perm("templates:read"), Handler: h.get,
			Summary: "Get a template", Response: templateResp{}},
		{Method: "POST", Path: "/api/templates", Access: web.Perm("templates:create"), Handler: h.create,
			Summary: "Create a template here (POST /publish submits it to the provider)", Request: createRequest{}, Response: templateResp{}, Status: http.StatusCreated,
			Errors: []int{http.StatusBadGateway}},
		{Method: "PUT", Path: "/api/templates/:id", Access: web.Perm("templates:update"), Handler: h.update,
			Summary: "Change a template's components or sample values", Request: updateRequest{}, Response: templateResp{}},
		{Method: "DELETE", Path: "/api/templates/:id", Access: web.Perm("templates:delete"), Handler: h.delete,
			Summary: "Delete a template", Response: web.MessageResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/templates/sync", Access: web.Perm("templates:update"), Bulk: true, Handler: h.sync,
			Summary: "Sync an account's templates from the provider (202 with the task id when it takes longer than 25 s)",
			Request: syncRequest{}, Response: syncResp{}, Errors: []int{http.StatusBadGateway},
			Also: []web.Answer{{Status: http.StatusAccepted, Response: syncQueuedResp{},
				Description: "The sync goes on in the worker; GET /api/templates shows its result."}}},
		{Method: "POST", Path: "/api/templates/:id/publish", Access: web.Perm("templates:update"), Handler: h.publish,
			Summary: "Submit a template to the provider for review", Response: publishedResp{},
			Errors: []int{http.StatusBadGateway}},
	}
}
