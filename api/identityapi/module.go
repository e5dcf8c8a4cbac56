package identityapi

import (
	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/ratelimit"
	"wharf/module"
)

// Module is identity's share of the processes: its routes, the jobs of API
// key use and the refresh tokens' purge, and the purge's schedule.
func Module(ids *identity.Service, limiter *ratelimit.Limiter, origins web.Origins) module.Module {
	return module.Module{Tag: "Identity", Routes: New(ids, limiter, origins).Routes(), Jobs: ids.Jobs(), Schedules: identity.Schedules()}
}
