package resourceapi

import (
	"slices"

	"wharf/internal/docframe"
	"wharf/internal/inbound"
	"wharf/internal/templates"
	"wharf/internal/wharfapp"
	"wharf/internal/wharfnotify"
	"wharf/module"
)

// Module is the document framework's share of the processes with its
// messaging integration (wharfapp, wharfnotify): Frappe's resource API,
// the jobs and schedules of field indexes, template submissions and
// notifications, and the integration's consumers: template status events
// (the core template, then its Platform Template) and the copy of incoming
// messages and of recorded bulk sends' statuses into Platform Messages,
// which comes after every other consumer (its module is after theirs). An
// Outgoing Platform Message sent through the core follows its statuses
// from the events outbox instead (wharfapp, projection.go).
func Module(frame *docframe.Service, maskers Maskers, wharf *wharfapp.Service, notify *wharfnotify.Service, core *templates.Service) module.Module {
	return module.Module{Tag: "Resource API (Frappe)", Routes: New(frame, maskers).Routes(),
		Jobs:      slices.Concat(frame.Jobs(), wharf.Jobs(), notify.Jobs()),
		Consumers: []inbound.Consumer{wharf.TemplateEvents(core), wharf},
		Schedules: slices.Concat(wharfnotify.Schedules(), wharfapp.Schedules(), docframe.Schedules())}
}
