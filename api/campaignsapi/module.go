package campaignsapi

import (
	"time"

	"wharf/internal/campaigns"
	"wharf/internal/inbound"
	"wharf/module"
)

// Module is the campaigns' share of the processes: their routes, their
// jobs (lanes, recounts, starts, replies, the sweep) and schedules (sweep
// is CAMPAIGN_SWEEP_INTERVAL), and their consumer of the statuses of
// campaign sends.
func Module(cps *campaigns.Service, maskers Maskers, sweep time.Duration) module.Module {
	return module.Module{Tag: "Campaigns", Routes: New(cps, maskers).Routes(), Jobs: cps.Jobs(),
		Consumers: []inbound.Consumer{cps}, Schedules: campaigns.Schedules(sweep)}
}
