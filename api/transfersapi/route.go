package transfersapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the agent transfer routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/chatbot/transfers", Access: web.Perm("transfers:read"), Handler: h.list,
			Summary: "List transfers (newest first) with the queues' lengths", Query: listQuery{}, Response: listResp{}},
		{Method: "POST", Path: "/api/chatbot/transfers", Access: web.Perm("transfers:write"), Handler: h.create,
			Summary: "Hand a contact to a person (answers the contact's active transfer if it has one)", Request: createRequest{},
			Response: transferResp{}, Status: http.StatusCreated, Also: []web.Answer{{Status: http.StatusOK, Response: transferResp{}}}},
		{Method: "GET", Path: "/api/chatbot/transfers/:id", Access: web.Perm("transfers:read"), Handler: h.get,
			Summary: "Get a transfer", Response: transferResp{}},
		{Method: "POST", Path: "/api/chatbot/transfers/pickup", Access: web.Perm("transfers:write"), Handler: h.pickup,
			Summary: "Pick up the oldest waiting transfer of a queue", Query: pickupQuery{}, Response: transferResp{},
			Errors: []int{http.StatusNotFound}},
		{Method: "PUT", Path: "/api/chatbot/transfers/:id/assign", Access: web.Perm("transfers:assign"), Handler: h.assign,
			Summary: "Assign a transfer to an agent", Request: assignRequest{}, Response: transferResp{}},
		{Method: "PUT", Path: "/api/chatbot/transfers/:id/resume", Access: web.Perm("transfers:write"), Handler: h.resume,
			Summary: "End a transfer: the chatbot speaks again", Response: transferResp{}},
	}
}
