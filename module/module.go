// Package module is the one shape in which a domain shows itself to the
// processes: its routes under their tag (the api), its job handlers (the
// worker), its consumers of the provider's webhooks (inbound) and its
// periodic jobs (the scheduler). Each domain's handler package exports a
// Module function; app lists the modules once, in the order of the route
// table, and each process takes what it needs from that one list. So a new
// domain touches its own folders and one line of app.
//
// A module is a value built at construction with the services it calls;
// nothing registers itself later. Building it reads no service's state, so
// the scheduler, and the tests that read the route table, build the list
// without services: they only read its routes and schedules.
package module

import (
	"slices"

	"wharf/api/web"
	"wharf/internal/inbound"
	"wharf/jobs"
)

// Module is one domain's share of the processes; it has whatever of them
// the domain has.
type Module struct {
	// Tag names the domain's routes in the OpenAPI document and groups
	// them in docs/API.md.
	Tag    string
	Routes []web.Route
	// Jobs are the handlers of the task types the domain's work is queued
	// as; a task type has one handler in the whole list.
	Jobs []jobs.Handler
	// Consumers see the provider's webhooks, in the order of the modules
	// and within a module in the order given (see inbound.Consumer: a
	// status goes down the chain of status consumers, so messaging's module
	// comes before the campaigns', and the integration, which mirrors every
	// status, is last).
	Consumers []inbound.Consumer
	// Schedules are the domain's periodic jobs.
	Schedules []jobs.Schedule
}

// Routes is every module's routes in module order, each with its module's
// tag.
func Routes(mods []Module) []web.Route {
	var out []web.Route
	for _, m := range mods {
		for _, r := range m.Routes {
			r.Tag = m.Tag
			out = append(out, r)
		}
	}
	return out
}

// Jobs is every module's job handlers.
func Jobs(mods []Module) []jobs.Handler {
	return slices.Concat(collect(mods, func(m Module) []jobs.Handler { return m.Jobs })...)
}

// Consumers is every module's inbound consumers, in module order.
func Consumers(mods []Module) []inbound.Consumer {
	return slices.Concat(collect(mods, func(m Module) []inbound.Consumer { return m.Consumers })...)
}

// Schedules is every module's periodic jobs.
func Schedules(mods []Module) []jobs.Schedule {
	return slices.Concat(collect(mods, func(m Module) []jobs.Schedule { return m.Schedules })...)
}

func collect[T any](mods []Module, part func(Module) []T) [][]T {
	out := make([][]T, len(mods))
	for i, m := range mods {
		out[i] = part(m)
	}
	return out
}
