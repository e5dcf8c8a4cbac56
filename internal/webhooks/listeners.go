package webhooks

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/versioned"
)

// WithListenerCache keeps, per organization, the events its active webhooks
// subscribe to in process, exact across processes through a version per
// organization in rdb that every webhook change replaces after its commit
// (internal/infra/versioned); maxAge bounds an entry's life should an
// invalidation be lost. Every incoming message and every send asks whether
// someone listens: without it, that is a query in their transactions.
//
// A webhook created while a change is written is missed by that change
// either way, as if it had been created just after it; one switched off may
// still get an event recorded, which its delivery then skips.
func WithListenerCache(rdb redis.UniversalClient, maxAge time.Duration, log *slog.Logger) Option {
	return func(s *Service) { s.listeners = versioned.New[uuid.UUID, map[string]bool](rdb, maxAge, 50_000, log) }
}

func listenersVersionKey(org uuid.UUID) string { return "wharf:webhooks:v:" + org.String() }

// subscribed answers the events the organization's active webhooks
// subscribe to: from the cache when there is one, else read through db.
// The map is shared: callers only read it.
//
// A miss loads through db, the caller's transaction, never through a
// second connection of the pool: the caller may hold locks others wait
// for with their own connections (fifty transfers of one team, each
// waiting on the team's lock), and a second connection asked for while
// the pool is spent on them would never come. That is exact: no caller's
// transaction writes webhooks (Create, Update and Delete write on their
// own), and every transaction runs at READ COMMITTED, so the load sees
// what is committed.
func (s *Service) subscribed(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (map[string]bool, error) {
	load := func() (map[string]bool, error) {
		var events []string
		err := db.WithContext(ctx).Raw(`SELECT DISTINCT e FROM webhooks, jsonb_array_elements_text(events) e
			WHERE organization_id = ? AND is_active`, orgID).Scan(&events).Error
		set := make(map[string]bool, len(events))
		for _, e := range events {
			set[e] = true
		}
		return set, err
	}
	if s.listeners == nil {
		return load()
	}
	return s.listeners.Get(ctx, orgID, []string{listenersVersionKey(orgID)}, load)
}

// listenersChanged replaces the organization's version after a webhook
// change committed.
func (s *Service) listenersChanged(ctx context.Context, orgID uuid.UUID) {
	if s.listeners != nil {
		s.listeners.Changed(ctx, listenersVersionKey(orgID), func(k uuid.UUID) bool { return k == orgID })
	}
}
