package cannedapi

import (
	"wharf/internal/canned"
	"wharf/module"
)

// Module is the canned responses' share of the processes: routes.
func Module(c *canned.Service) module.Module {
	return module.Module{Tag: "Canned responses", Routes: New(c).Routes()}
}
