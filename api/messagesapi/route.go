package messagesapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the messages routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/contacts/:id/messages", Access: web.Perm("messages:read"), Handler: h.list,
			Summary: "A contact's messages in chronological order, by page (page 1 the newest) or around a cursor", Query: listQuery{},
			Response: web.Page[messageResp]{}},
		{Method: "POST", Path: "/api/contacts/:id/messages", Access: web.Perm("messages:create"), Handler: h.send,
			Summary: "Send a text, interactive or uploaded-media message (POST /api/media) within the service window", Request: sendRequest{},
			Response: sentResp{}, Status: http.StatusCreated, Errors: []int{http.StatusBadGateway}},
		{Method: "POST", Path: "/api/media", Access: web.Perm("messages:create"), Bulk: true, Handler: h.upload,
			Summary: "Upload a file to send (multipart): checked against the provider's type and size limits, kept in storage",
			Request: uploadForm{}, Response: uploadResp{}, Status: http.StatusCreated},
		{Method: "GET", Path: "/api/messages/:id/media", Access: web.Perm("messages:read"), Handler: h.serveMedia,
			Summary:  "The message's stored media (received or sent), with its type; an attachment unless image, audio, video or PDF",
			Produces: "*/*"},
		{Method: "POST", Path: "/api/messages/template", Access: web.Perm("messages:create"), Handler: h.sendTemplate,
			Summary: "Queue a template message to a contact or phone number", Request: templateRequest{},
			Response: queuedResp{}, Status: http.StatusAccepted},
		{Method: "POST", Path: "/api/messages/media", Access: web.Perm("messages:create"), Handler: h.sendMedia,
			Summary: "Send an image, video, audio or document by URL", Request: mediaRequest{},
			Response: sentResp{}, Status: http.StatusCreated, Errors: []int{http.StatusBadGateway}},
		{Method: "PUT", Path: "/api/contacts/:id/read", Access: web.Perm("messages:read"), Handler: h.markConversationRead,
			Summary:  "Mark a conversation read: the provider's read receipt for its last incoming message (once) and its unread count reset",
			Response: conversationReadResp{}, Errors: []int{http.StatusBadGateway}},
		{Method: "PUT", Path: "/api/messages/:id/read", Access: web.Perm("messages:read"), Handler: h.markRead,
			Summary: "Mark an incoming message read, at the provider and here", Errors: []int{http.StatusBadGateway}},
	}
}
