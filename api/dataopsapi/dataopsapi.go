// Package dataopsapi is the HTTP surface of data operations: CSV exports
// of contacts and tags (and their configuration). An export streams: the
// answer's status and headers go out once the request is checked, then
// the rows as they are read.
package dataopsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/apperr"
	"wharf/internal/dataops"
)

// Handlers serves the data operations routes.
type Handlers struct {
	ops *dataops.Service
}

// New builds the data operations handlers.
func New(ops *dataops.Service) *Handlers { return &Handlers{ops: ops} }

// mayExport checks the table's export permission (contacts:export or
// tags:export): the route cannot name it, the table is in the request.
func mayExport(c *gin.Context, table string) bool {
	if table != "contacts" && table != "tags" {
		web.Fail(c, apperr.Invalidf("table must be contacts or tags"))
		return false
	}
	if !web.Principal(c).Can(table + ":export") {
		web.Fail(c, apperr.Forbiddenf("exporting %s needs the %s:export permission", table, table))
		return false
	}
	return true
}
