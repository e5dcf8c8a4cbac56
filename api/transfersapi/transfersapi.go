// Package transfersapi is the HTTP surface of agent transfers: the queues
// agents pick conversations up from, and the managers' assignments.
package transfersapi

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/orgsettings"
	"wharf/internal/transfers"
)

// Maskers gives an organization's phone-number masker: transfers show the
// contact's number and name.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Handlers serves the agent transfer routes.
type Handlers struct {
	transfers *transfers.Service
	maskers   Maskers
}

// New builds the transfer handlers.
func New(t *transfers.Service, maskers Maskers) *Handlers {
	return &Handlers{transfers: t, maskers: maskers}
}

func caller(c *gin.Context) transfers.Caller {
	p := web.Principal(c)
	return transfers.Caller{UserID: p.UserID, CanAssign: p.Can("transfers:assign")}
}
