package webhooksapi

import (
	"wharf/internal/webhooks"
	"wharf/module"
)

// Module is the outbound webhooks' share of the processes: their routes,
// the dispatch and delivery jobs, and the sweep's schedule. subscribers
// consume the events outbox's events as they are dispatched, before any
// webhook gets them.
func Module(hooks *webhooks.Service, subscribers ...webhooks.Subscriber) module.Module {
	return module.Module{Tag: "Webhooks", Routes: New(hooks).Routes(), Jobs: hooks.Jobs(subscribers...), Schedules: webhooks.Schedules()}
}
