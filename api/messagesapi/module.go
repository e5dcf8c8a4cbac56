package messagesapi

import (
	"wharf/internal/inbound"
	"wharf/internal/messaging"
	"wharf/module"
)

// Module is messaging's share of the processes: its routes, the jobs of
// queued sends and media fetches with their sweeps' schedules, and its
// consumer (it stores incoming messages and applies their statuses first).
func Module(msg *messaging.Service, maskers Maskers, visible Visibility) module.Module {
	return module.Module{Tag: "Messages", Routes: New(msg, maskers, visible).Routes(), Jobs: msg.Jobs(),
		Consumers: []inbound.Consumer{msg}, Schedules: messaging.Schedules()}
}
