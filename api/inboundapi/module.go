package inboundapi

import (
	"wharf/internal/inbound"
	"wharf/module"
)

// Module is inbound's share of the processes: the provider's webhook
// route, the jobs that hand its events to the consumers, and the sweep's
// schedule. The consumers are the other domains' modules'.
func Module(in *inbound.Service) module.Module {
	return module.Module{Tag: "Provider webhook", Routes: New(in).Routes(), Jobs: in.Jobs(), Schedules: inbound.Schedules()}
}
