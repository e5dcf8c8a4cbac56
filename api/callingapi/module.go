package callingapi

import (
	"wharf/internal/calling"
	"wharf/internal/inbound"
	"wharf/module"
)

// Module is calling's share of the processes: its routes and its consumer
// of the provider's call events.
func Module(calls *calling.Service, maskers Maskers) module.Module {
	return module.Module{Tag: "Calling", Routes: New(calls, maskers).Routes(), Consumers: []inbound.Consumer{calls}}
}
