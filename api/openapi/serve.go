package openapi

import (
	_ "embed"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
)

// page is the reference page: it fetches the document and renders it, with
// no script or style from anywhere else.
//
//go:embed docs.html
var page []byte

// pageCSP lets the page run its own inline script and style and fetch the
// document from this server, and nothing else.
const pageCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handlers serve the document and its reference page.
type Handlers struct {
	doc []byte
}

// New generates the document of routes and of the handlers' own routes.
func New(routes []web.Route) (*Handlers, error) {
	h := &Handlers{}
	doc, err := Build(slices.Concat(routes, h.Routes()))
	if err != nil {
		return nil, err
	}
	h.doc = doc
	return h, nil
}

// Document is the OpenAPI document, as JSON.
func (h *Handlers) Document() []byte { return h.doc }

// Routes lists the document's routes. It reads no field of h, so a nil
// *Handlers lists the table too.
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/openapi.json", Access: web.Public(), Handler: h.document, Tag: "Documentation",
			Summary: "This document: the OpenAPI 3.1 description of every route", Response: documentShape{},
			Produces: "application/json"},
		{Method: "GET", Path: "/api/docs", Access: web.Public(), Handler: h.page, Tag: "Documentation",
			Summary: "A reference page that renders this document", Response: "", Produces: "text/html"},
	}
}

// documentShape is the outline of an OpenAPI document, for the schema of
// /api/openapi.json.
type documentShape struct {
	OpenAPI    string         `json:"openapi" const:"3.1.0"`
	Info       map[string]any `json:"info"`
	Paths      map[string]any `json:"paths"`
	Components map[string]any `json:"components"`
	Tags       []any          `json:"tags"`
}

func (h *Handlers) document(c *gin.Context) {
	c.Header("Cache-Control", "no-cache")
	c.Data(http.StatusOK, "application/json", h.doc)
}

func (h *Handlers) page(c *gin.Context) {
	c.Header("Content-Security-Policy", pageCSP)
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(http.StatusOK, "text/html; charset=utf-8", page)
}
