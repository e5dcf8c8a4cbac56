package webhooksapi

import (
	"wharf/internal/webhooks"
	"wharf/module"
)

// Module is the outbound webhooks' share of the processes: their routes,
// the dispatch and delivery jobs, and the sweep's schedule.
func Module(hooks *webhooks.Service) module.Module {
	return module.Module{Tag: "Webhooks", Routes: New(hooks).Routes(), Jobs: hooks.Jobs(), Schedules: webhooks.Schedules()}
}
