// Package resourceapi is the HTTP surface of the document framework in
// Frappe's shape: the generic resource API (/api/resource/{doctype}...) and
// whitelisted methods (/api/method/{method}). Its answers are Frappe's, not
// the core envelope: {data}, {message}, and errors as {exc_type, exception,
// _server_messages} with Frappe's statuses (errors.go), so that clients made
// for Frappe work unchanged.
package resourceapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/docframe"
)

// Handlers serves the resource and method routes.
type Handlers struct {
	frame *docframe.Service
}

// New builds the resource API's handlers.
func New(frame *docframe.Service) *Handlers { return &Handlers{frame: frame} }

// actor is the caller as the framework sees them.
func actor(c *gin.Context) docframe.Actor {
	p := web.Principal(c)
	return docframe.Actor{UserID: p.UserID, Email: p.Email, Role: p.RoleName, SuperAdmin: p.IsSuperAdmin}
}
