// Package teamsapi is the HTTP surface of teams and their members. Who may
// do what is decided in internal/teams (teams:update or the team's
// manager); the routes only ask for the least permission of each.
package teamsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/teams"
)

// Handlers serves the teams routes.
type Handlers struct {
	teams *teams.Service
}

// New builds the teams handlers.
func New(t *teams.Service) *Handlers { return &Handlers{teams: t} }

// caller is the principal as the teams domain sees it.
func caller(c *gin.Context) teams.Caller {
	p := web.Principal(c)
	return teams.Caller{UserID: p.UserID, ManageAll: p.Can("teams:update")}
}
