package teamsapi

import (
	"wharf/internal/teams"
	"wharf/module"
)

// Module is the teams' share of the processes: routes.
func Module(t *teams.Service) module.Module {
	return module.Module{Tag: "Teams", Routes: New(t).Routes()}
}
