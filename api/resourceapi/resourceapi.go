// Package resourceapi is the HTTP surface of the document framework in
// Frappe's shape: the generic resource API (/api/resource/{doctype}...) and
// whitelisted methods (/api/method/{method}). Its answers are Frappe's, not
// the core envelope: {data}, {message}, and errors as {exc_type, exception,
// _server_messages} with Frappe's statuses (errors.go), so that clients made
// for Frappe work unchanged.
package resourceapi

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/integration/docframe"
	"wharf/internal/orgsettings"
)

// Maskers gives an organization's phone-number masker: the integration's
// built-in DocTypes mask numbers and names as the core API does.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Handlers serves the resource and method routes.
type Handlers struct {
	frame   *docframe.Service
	maskers Maskers
}

// New builds the resource API's handlers.
func New(frame *docframe.Service, maskers Maskers) *Handlers {
	return &Handlers{frame: frame, maskers: maskers}
}

// actor is the caller as the framework sees them: role, core permissions
// (for the guarded DocTypes) and whether their organization masks numbers.
func (h *Handlers) actor(c *gin.Context) (docframe.Actor, error) {
	p := web.Principal(c)
	m, err := h.maskers.Masker(c.Request.Context(), p.OrgID)
	if err != nil {
		return docframe.Actor{}, err
	}
	return docframe.Actor{UserID: p.UserID, Email: p.Email, Role: p.RoleName, SuperAdmin: p.IsSuperAdmin, Perms: p,
		MaskPhones: m.Hides()}, nil
}
