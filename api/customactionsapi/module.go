package customactionsapi

import (
	"wharf/internal/customactions"
	"wharf/module"
)

// Module is the custom actions' share of the processes: routes.
func Module(a *customactions.Service) module.Module {
	return module.Module{Tag: "Custom actions", Routes: New(a).Routes()}
}
