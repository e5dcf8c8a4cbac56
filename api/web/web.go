// Package web is the foundation every HTTP handler package builds on: the
// route row (path, access, rate-limit class and the types that describe the
// request and the answer), the response envelope and its responders, the one
// mapping from errors to status codes, request helpers (JSON bodies, UUID
// path and query parameters, paging) and the values the middleware leaves in
// the request for handlers (the principal, the request's logger).
//
// It knows no domain: the domain handler packages under api/ import it, and
// the api package serves their routes behind its middleware.
package web

import "github.com/gin-gonic/gin"

// Route is one row of the router table. Besides what the router needs, it
// carries the typed description of the request and the answer, from which
// the OpenAPI document is generated so that it cannot drift from the code.
type Route struct {
	Method, Path string
	Access       Access
	// Bulk routes draw on the bulk allowance (RATE_LIMIT_BULK_PER_MINUTE)
	// instead of the standard one.
	Bulk bool
	// SessionOnly routes refuse API keys: a leaked key must not be able to
	// mint more keys, switch organization, change a password or an email,
	// or manage users, members, roles and organizations. The identity
	// domain refuses API-key principals on the same operations as well.
	SessionOnly bool
	// Unlimited routes skip the rate limiter: the provider's inbound webhook
	// must never be refused for volume.
	Unlimited bool
	Handler   gin.HandlerFunc

	// Summary says in one line what the route does.
	Summary string
	// Request is a zero value of the body's type (JSON unless its fields
	// carry `formData` tags, which make it multipart/form-data); nil when
	// the route takes no body.
	Request any
	// AlsoRequest is a second body the route takes, of another media type
	// (a multipart CSV variant of a JSON import); the handler tells them
	// apart by Content-Type. nil: none.
	AlsoRequest any
	// Response is a zero value of the type of `data` in the success
	// envelope; nil when data is null.
	Response any
	// Query is a zero value of a struct whose fields list the query
	// parameters (`query:"name"` and `description:"..."` tags); nil when
	// the route reads none.
	Query any
	// Status is the success status when it is not 200 (201 for creations,
	// 202 for work left to the worker).
	Status int
	// Produces is the media type of a success answer that is not the JSON
	// envelope (the provider's verification handshake in plain text, a
	// server-sent event stream whose events carry Response as JSON).
	Produces string
	// Also lists success answers besides the Status one (a template sync
	// that finished in time answers 200 with its counts, one still running
	// 202 with its task).
	Also []Answer
	// Errors lists the error statuses the route answers besides those its
	// row implies (api/openapi's errorStatuses: 400 for inputs, 401 and 403
	// for credentials, 404 for path ids, 409 for changes, 413 for bodies,
	// 429 for the rate limit, 500): 502 when it calls the provider, 404
	// for an id in its body...
	Errors []int
	// Fail answers the route's errors when they are not in the envelope
	// (the Frappe-shaped resource API); the shell's middleware uses it for
	// its own refusals too (401, 403, 429). nil: web.Fail.
	Fail func(*gin.Context, error)
	// ErrorBody is a zero value of the body of the route's error answers
	// when Fail is set, for the OpenAPI document.
	ErrorBody any
	// Tag groups the route in the OpenAPI document: its domain, which the
	// api package sets.
	Tag string
}

// Answer is one more success answer of a route: its status and the type of
// data in the envelope.
type Answer struct {
	Status      int
	Response    any
	Description string
}

// Failer answers the route's errors: its own Fail, or web.Fail.
func (r Route) Failer() func(*gin.Context, error) {
	if r.Fail != nil {
		return r.Fail
	}
	return Fail
}
