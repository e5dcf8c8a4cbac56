package dataopsapi

import (
	"wharf/internal/dataops"
	"wharf/module"
)

// Module is export and import's share of the processes: their routes, the
// import jobs and the purge's schedule.
func Module(ops *dataops.Service, cfg Config) module.Module {
	return module.Module{Tag: "Export and import", Routes: New(ops, cfg).Routes(), Jobs: ops.Jobs(), Schedules: dataops.Schedules()}
}
