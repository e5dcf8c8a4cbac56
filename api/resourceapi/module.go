package resourceapi

import (
	"slices"

	"wharf/internal/inbound"
	"wharf/internal/integration/docframe"
	"wharf/internal/integration/messages"
	"wharf/internal/integration/notify"
	"wharf/internal/templates"
	"wharf/module"
)

// Module is the document framework's share of the processes with its
// messaging integration (messages, notify): Frappe's resource API,
// the jobs and schedules of field indexes, template submissions and
// notifications, and the integration's consumers: template status events
// (the core template, then its Platform Template) and the copy of incoming
// messages into Platform Messages, which comes after every other consumer
// (its module is after theirs). Outgoing Platform Messages follow their
// statuses from the events outbox instead (messages/projection.go,
// bulk/projection.go).
func Module(frame *docframe.Service, maskers Maskers, wharf *messages.Service, notifications *notify.Service, core *templates.Service) module.Module {
	return module.Module{Tag: "Resource API (Frappe)", Routes: New(frame, maskers).Routes(),
		Jobs:      slices.Concat(frame.Jobs(), wharf.Jobs(), notifications.Jobs()),
		Consumers: []inbound.Consumer{wharf.TemplateEvents(core), wharf},
		Schedules: slices.Concat(notify.Schedules(), messages.Schedules(), docframe.Schedules())}
}
