package eventsapi

import (
	"wharf/internal/infra/live"
	"wharf/module"
)

// Module is the event stream's share of the processes: its route.
func Module(bus Bus, slots *live.Slots, maskers Maskers, teams Teams, ids Identity, cfg Config) module.Module {
	return module.Module{Tag: "Live events", Routes: New(bus, slots, maskers, teams, ids, cfg).Routes()}
}
