package pflowsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the platform flows routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI). Saving,
// publishing, deprecating and syncing change flows: flows:update.
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/flows", Access: web.Perm("flows:read"), Handler: h.list,
			Summary: "List the organization's platform flows, newest first", Query: listQuery{}, Response: web.Page[flowSummary]{}},
		{Method: "GET", Path: "/api/flows/:id", Access: web.Perm("flows:read"), Handler: h.get,
			Summary: "Get a platform flow with its json_definition", Response: flowResp{}},
		{Method: "POST", Path: "/api/flows", Access: web.Perm("flows:create"), Handler: h.create,
			Summary: "Create a DRAFT platform flow here (save-to-meta sends it to the provider)", Request: createRequest{},
			Response: flowResp{}, Status: http.StatusCreated, Errors: []int{http.StatusNotFound}},
		{Method: "PUT", Path: "/api/flows/:id", Access: web.Perm("flows:update"), Handler: h.update,
			Summary: "Change a DRAFT flow's name, categories or json_definition (409 in any other state)", Request: updateRequest{},
			Response: flowResp{}},
		{Method: "DELETE", Path: "/api/flows/:id", Access: web.Perm("flows:delete"), Handler: h.delete,
			Summary:  "Delete a flow (a saved DRAFT at the provider too; a PUBLISHED one is refused: deprecate it first)",
			Response: web.MessageResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/flows/sync", Access: web.Perm("flows:update"), Bulk: true, Handler: h.sync,
			Summary: "Sync an account's flows from the provider, matched by provider_flow_id", Request: syncRequest{},
			Response: syncResp{}, Errors: []int{http.StatusNotFound, http.StatusBadGateway}},
		{Method: "POST", Path: "/api/flows/:id/save-to-meta", Access: web.Perm("flows:update"), Handler: h.save,
			Summary:  "Create the DRAFT flow at the provider if needed and upload its flow JSON; answers the provider's validation errors",
			Response: savedResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/flows/:id/publish", Access: web.Perm("flows:update"), Handler: h.publish,
			Summary: "Publish a saved DRAFT flow without validation errors at the provider", Response: statusResp{},
			Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/flows/:id/deprecate", Access: web.Perm("flows:update"), Handler: h.deprecate,
			Summary: "Deprecate a PUBLISHED flow at the provider (final)", Response: statusResp{},
			Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/flows/:id/send", Access: web.Perm("messages:create"), Handler: h.send,
			Summary: "Send a PUBLISHED flow to a contact as a flow message (within the contact's 24-hour window)",
			Request: sendRequest{}, Response: sentResp{}, Errors: []int{http.StatusBadGateway, http.StatusTooManyRequests}},
	}
}
