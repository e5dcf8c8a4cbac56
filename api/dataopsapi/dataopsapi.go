// Package dataopsapi is the HTTP surface of data operations: CSV exports
// and imports of contacts and tags (and their configuration). An export
// streams: the answer's status and headers go out once the request is
// checked, then the rows as they are read. An import is checked here, then
// run by the worker; the request waits for its result (202 past the wait).
package dataopsapi

import (
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/dataops"
	"wharf/internal/infra/apperr"
)

// Handlers serves the data operations routes.
type Handlers struct {
	ops *dataops.Service
	cfg Config
}

// Config is how the api serves data operations.
type Config struct {
	// ImportWait is how long an import waits for the worker's result
	// before answering 202 (IMPORT_WAIT).
	ImportWait time.Duration
	// ExportStall is how long an export waits for a client that stopped
	// reading before it cuts the connection and ends its transaction
	// (EXPORT_STALL_TIMEOUT).
	ExportStall time.Duration
	// ExportSlots bounds the exports streamed at once (EXPORT_CONCURRENCY,
	// EXPORT_CONCURRENCY_PER_ORG).
	ExportSlots *dataops.ExportSlots
}

// New builds the data operations handlers.
func New(ops *dataops.Service, cfg Config) *Handlers {
	return &Handlers{ops: ops, cfg: cfg}
}

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

// mayImport checks the table's import permission (contacts:import or
// tags:import), like mayExport.
func mayImport(c *gin.Context, table string) bool {
	if table != "contacts" && table != "tags" {
		web.Fail(c, apperr.Invalidf("table must be contacts or tags"))
		return false
	}
	if !web.Principal(c).Can(table + ":import") {
		web.Fail(c, apperr.Forbiddenf("importing %s needs the %s:import permission", table, table))
		return false
	}
	return true
}
