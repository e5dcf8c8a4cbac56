package pflowsapi

import (
	"wharf/internal/messaging"
	"wharf/internal/pflows"
	"wharf/module"
)

// Module is the platform flows' share of the processes: routes.
func Module(f *pflows.Service, m *messaging.Service) module.Module {
	return module.Module{Tag: "Platform flows", Routes: New(f, m).Routes()}
}
