// Package eventsapi is the per-user event stream, GET /api/events:
// server-sent events of the changes a user may see (internal/live), for the
// console's live pages.
package eventsapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wharf/internal/identity"
	"wharf/internal/infra/live"
	"wharf/internal/orgsettings"
)

// Bus is where the events come from (live.Bus).
type Bus interface {
	Subscribe(ctx context.Context, orgID uuid.UUID) (*live.Sub, error)
	Since(ctx context.Context, orgID uuid.UUID, last string) ([]live.Event, bool, error)
}

// Maskers gives an organization's phone-number masker.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Teams answers the teams a user belongs to (the transfers' team rule).
type Teams interface {
	TeamsOf(ctx context.Context, orgID, user uuid.UUID) ([]uuid.UUID, error)
}

// Identity checks a stream's caller again while it lasts.
type Identity interface {
	Recheck(ctx context.Context, p *identity.Principal) (*identity.Principal, error)
	Tokens() *identity.Tokens
}

// Config are the stream's timings; zero values take the defaults.
type Config struct {
	// Heartbeat is the interval of the keep-alive comments (default 15 s):
	// proxies and load balancers cut connections idle for 30 to 60 s.
	Heartbeat time.Duration
	// Recheck is how often a stream loads its user's principal and teams
	// again (default 30 s): a removed user, a deleted API key or a lost
	// permission stops what the stream sends within that time.
	Recheck time.Duration
}

// Handlers serves the event stream.
type Handlers struct {
	bus      Bus
	slots    *live.Slots
	maskers  Maskers
	teams    Teams
	identity Identity
	cfg      Config
}

// New builds the handlers.
func New(bus Bus, slots *live.Slots, maskers Maskers, teams Teams, ids Identity, cfg Config) *Handlers {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 15 * time.Second
	}
	if cfg.Recheck <= 0 {
		cfg.Recheck = 30 * time.Second
	}
	return &Handlers{bus: bus, slots: slots, maskers: maskers, teams: teams, identity: ids, cfg: cfg}
}
