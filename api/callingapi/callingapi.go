// Package callingapi is the HTTP surface of voice calls: the call logs and
// call transfers (reads scoped to the caller's organization), the control
// of calls (connect, hold, resume, hangup, transfer, outgoing calls), which
// the calling domain routes to the call bridge that owns a call's media,
// call permissions read live from the provider, the browser's ICE servers
// and recording URLs.
//
// The spec names the five calling permissions without saying which
// operation needs which; the choice is in Routes and docs/CALLING.md.
package callingapi

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/calling"
	"wharf/internal/orgsettings"
)

// Maskers gives an organization's phone-number masker: call logs and
// transfers show the caller's number.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Handlers serves the calling routes.
type Handlers struct {
	calls   *calling.Service
	maskers Maskers
}

// New builds the calling handlers.
func New(calls *calling.Service, maskers Maskers) *Handlers {
	return &Handlers{calls: calls, maskers: maskers}
}

// caller is the authenticated user a control request comes from.
func caller(c *gin.Context) calling.Caller {
	p := web.Principal(c)
	// transfers:assign (Admin, Manager) supervises every call, as it
	// assigns every conversation transfer.
	return calling.Caller{OrgID: p.OrgID, UserID: p.UserID, Supervisor: p.Can("transfers:assign")}
}

// masker is the organization's masker, answering the error itself.
func (h *Handlers) masker(c *gin.Context) (orgsettings.Masker, bool) {
	m, err := h.maskers.Masker(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return m, false
	}
	return m, true
}
