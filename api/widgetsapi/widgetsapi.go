// Package widgetsapi is the HTTP surface of dashboard widgets: a user's
// tiles and the organization's shared ones, their layout, and the figures
// they show over a period.
package widgetsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/widgets"
)

// Handlers serves the widget routes.
type Handlers struct {
	widgets *widgets.Service
}

// New builds the widget handlers.
func New(w *widgets.Service) *Handlers { return &Handlers{widgets: w} }

// sharePermission lets a caller share a widget with the organization.
const sharePermission = "analytics:share"

func caller(c *gin.Context) widgets.Caller {
	p := web.Principal(c)
	return widgets.Caller{OrgID: p.OrgID, UserID: p.UserID, CanShare: p.Can(sharePermission)}
}
