package resourceapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the resource API's routes. Their answers are Frappe's
// (Produces application/json: no envelope) and so are their errors (Fail,
// ErrorBody), the middleware's refusals included. Access is any member of
// the organization: what each may do is decided per DocType by the
// framework (its permission rows). Routes reads no field of h.
func (h *Handlers) Routes() []web.Route {
	row := func(r web.Route) web.Route {
		r.Access, r.Produces, r.Fail, r.ErrorBody = web.Authenticated(), "application/json", fail, frappeError{}
		return r
	}
	return []web.Route{
		row(web.Route{Method: "GET", Path: "/api/resource/:doctype", Handler: h.list,
			Summary: "List documents of a DocType (Frappe: filters, fields, order_by, limit, search_term)", Query: listQuery{}, Response: listResp{}}),
		row(web.Route{Method: "POST", Path: "/api/resource/:doctype", Handler: h.create, Status: http.StatusCreated,
			Summary: "Create a document (or a DocType, at /api/resource/DocType)", Request: docBody{}, Response: docResp{}}),
		row(web.Route{Method: "GET", Path: "/api/resource/:doctype/:name", Handler: h.get,
			Summary: "Get a document with its child tables", Response: docResp{}}),
		row(web.Route{Method: "PUT", Path: "/api/resource/:doctype/:name", Handler: h.update,
			Summary: "Change the given fields of a draft document (a given table replaces the table)", Request: docBody{}, Response: docResp{}}),
		row(web.Route{Method: "DELETE", Path: "/api/resource/:doctype/:name", Handler: h.delete,
			Summary: "Delete a draft or cancelled document", Response: okResp{}}),
		row(web.Route{Method: "POST", Path: "/api/resource/:doctype/:name", Handler: h.runMethod,
			Summary: "Run a method whitelisted on the DocType on a document (run_method)", Request: runMethodRequest{}, Response: runMethodResp{}}),
		row(web.Route{Method: "POST", Path: "/api/resource/:doctype/:name/submit", Handler: h.submit,
			Summary: "Submit a draft of a submittable DocType (docstatus 0 to 1)", Response: docResp{}}),
		row(web.Route{Method: "POST", Path: "/api/resource/:doctype/:name/cancel", Handler: h.cancel,
			Summary: "Cancel a submitted document (docstatus 1 to 2)", Response: docResp{}}),
		row(web.Route{Method: "GET", Path: "/api/method/:method", Handler: h.method,
			Summary: "Call a whitelisted method with query arguments", Response: methodResp{}}),
		row(web.Route{Method: "POST", Path: "/api/method/:method", Handler: h.method,
			Summary: "Call a whitelisted method with body arguments", Request: methodBody{}, Response: methodResp{}}),
	}
}
