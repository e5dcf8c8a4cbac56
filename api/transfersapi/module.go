package transfersapi

import (
	"wharf/internal/transfers"
	"wharf/module"
)

// Module is the agent transfers' share of the processes: routes.
func Module(t *transfers.Service, maskers Maskers) module.Module {
	return module.Module{Tag: "Agent transfers", Routes: New(t, maskers).Routes()}
}
