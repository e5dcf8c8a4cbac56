package chatbotapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the chatbot routes. It reads no field of h, so a nil
// *Handlers lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	read, update := web.Perm("chatbot:read"), web.Perm("chatbot:update")
	return []web.Route{
		{Method: "GET", Path: "/api/chatbot/settings", Access: read, Handler: h.settings,
			Summary: "Get the chatbot settings", Response: settingsResp{}},
		{Method: "PUT", Path: "/api/chatbot/settings", Access: update, Handler: h.updateSettings,
			Summary: "Change chatbot settings (the fields given)", Request: settingsRequest{}, Response: settingsResp{}},
		{Method: "GET", Path: "/api/chatbot/keywords", Access: read, Handler: h.rules,
			Summary: "List keyword rules, highest priority first", Response: web.Items[ruleResp]{}},
		{Method: "POST", Path: "/api/chatbot/keywords", Access: update, Handler: h.createRule,
			Summary: "Create a keyword rule", Request: ruleRequest{}, Response: ruleResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/chatbot/keywords/:id", Access: update, Handler: h.updateRule,
			Summary: "Change a keyword rule", Request: ruleRequest{}, Response: ruleResp{}},
		{Method: "DELETE", Path: "/api/chatbot/keywords/:id", Access: update, Handler: h.deleteRule,
			Summary: "Delete a keyword rule", Response: web.MessageResp{}},
		{Method: "GET", Path: "/api/chatbot/ai-contexts", Access: read, Handler: h.contexts,
			Summary: "List AI contexts, highest priority first", Response: web.Items[contextResp]{}},
		{Method: "POST", Path: "/api/chatbot/ai-contexts", Access: update, Handler: h.createContext,
			Summary: "Create an AI context", Request: contextRequest{}, Response: contextResp{}, Status: http.StatusCreated},
		{Method: "PUT", Path: "/api/chatbot/ai-contexts/:id", Access: update, Handler: h.updateContext,
			Summary: "Change an AI context", Request: contextRequest{}, Response: contextResp{}},
		{Method: "DELETE", Path: "/api/chatbot/ai-contexts/:id", Access: update, Handler: h.deleteContext,
			Summary: "Delete an AI context", Response: web.MessageResp{}},
		{Method: "GET", Path: "/api/chatbot/flows", Access: read, Handler: h.flows,
			Summary: "List conversation flows", Response: web.Items[flowResp]{}},
		{Method: "POST", Path: "/api/chatbot/flows", Access: update, Handler: h.createFlow,
			Summary: "Create a conversation flow", Request: flowRequest{}, Response: flowResp{}, Status: http.StatusCreated},
		{Method: "GET", Path: "/api/chatbot/flows/:id", Access: read, Handler: h.flow,
			Summary: "Get a conversation flow", Response: flowResp{}},
		{Method: "PUT", Path: "/api/chatbot/flows/:id", Access: update, Handler: h.updateFlow,
			Summary: "Change a conversation flow", Request: flowRequest{}, Response: flowResp{}},
		{Method: "DELETE", Path: "/api/chatbot/flows/:id", Access: update, Handler: h.deleteFlow,
			Summary: "Delete a conversation flow (its active sessions end)", Response: web.MessageResp{}},
		{Method: "GET", Path: "/api/chatbot/sessions", Access: read, Handler: h.sessions,
			Summary: "List active chatbot sessions, most recently active first", Query: web.PageQuery{}, Response: web.Page[sessionResp]{}},
		{Method: "GET", Path: "/api/chatbot/sessions/:id", Access: read, Handler: h.session,
			Summary: "Get a chatbot session", Response: sessionResp{}},
	}
}
