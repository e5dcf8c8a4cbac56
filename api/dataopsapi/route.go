package dataopsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the data operations routes. It reads no field of h, so a
// nil *Handlers lists the table too (documentation, OpenAPI). Each needs
// the table's export or import permission (contacts:export, tags:import...),
// which the handlers check: the table is in the request (or the job).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/api/export", Access: web.Authenticated(), Bulk: true, Handler: h.export,
			Summary: "Export contacts or tags as CSV (needs contacts:export or tags:export)", Request: exportRequest{},
			Produces: "text/csv", Errors: []int{http.StatusForbidden}},
		{Method: "GET", Path: "/api/export/:table/config", Access: web.Authenticated(), Handler: h.config,
			Summary: "The columns a table can export, and its default columns (needs the table's export permission)", Response: configResp{}},
		{Method: "POST", Path: "/api/import", Access: web.Authenticated(), Bulk: true, Handler: h.importFile,
			Summary: "Import contacts or tags from a CSV file, run by the worker (needs contacts:import or tags:import)",
			Request: importRequest{}, Response: importResp{}, Errors: []int{http.StatusForbidden},
			Also: []web.Answer{{Status: http.StatusAccepted, Response: importQueuedResp{},
				Description: "The import outlasted the wait (IMPORT_WAIT) and goes on in the worker; its progress_url shows its progress and result."}}},
		{Method: "GET", Path: "/api/import/jobs", Access: web.AnyPerm("contacts:import", "tags:import"), Handler: h.importJobs,
			Summary: "The organization's recent imports, newest first: the caller's own and those of the tables it may import",
			Query:   importJobsQuery{}, Response: web.Page[importJobSummaryResp]{}, Errors: []int{http.StatusForbidden}},
		{Method: "GET", Path: "/api/import/jobs/:id", Access: web.Authenticated(), Handler: h.importJob,
			Summary: "An import's progress and, once done, its result (needs the table's import permission)", Response: importJobResp{},
			Errors: []int{http.StatusForbidden}},
		{Method: "GET", Path: "/api/import/:table/config", Access: web.Authenticated(), Handler: h.importConfig,
			Summary:  "The columns a table takes in an import: required, optional, and the unique one (needs the table's import permission)",
			Response: importConfigResp{}, Errors: []int{http.StatusForbidden}},
	}
}
