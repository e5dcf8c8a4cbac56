package eventsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the event stream's route. It reads no field of h.
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/events", Access: web.Authenticated(), Handler: h.stream,
			Summary: "The caller's live events as server-sent events: messages and their " +
				"statuses, contact assignments, transfers, calls, campaign and import progress, each only to users who may see it. " +
				"Send Last-Event-ID to resume; a comment every 15 s keeps the connection; at most 5 streams per user",
			Response: eventResp{}, Produces: "text/event-stream", Errors: []int{http.StatusServiceUnavailable}},
	}
}
