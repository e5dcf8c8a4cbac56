package dataopsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the data operations routes. It reads no field of h, so a
// nil *Handlers lists the table too (documentation, OpenAPI). Both need
// the table's export permission (contacts:export, tags:export), which the
// handlers check: the table is in the request.
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/api/export", Access: web.Authenticated(), Bulk: true, Handler: h.export,
			Summary: "Export contacts or tags as CSV (needs contacts:export or tags:export)", Request: exportRequest{},
			Produces: "text/csv", Errors: []int{http.StatusForbidden}},
		{Method: "GET", Path: "/api/export/:table/config", Access: web.Authenticated(), Handler: h.config,
			Summary: "The columns a table can export, and its default columns (needs the table's export permission)", Response: configResp{}},
	}
}
