package inbound

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"wharf/internal/accounts"
)

// A webhook's routes (which organization and app secret its numbers belong
// to) were one PostgreSQL query and a decryption per webhook: at thousands
// of webhooks a second, a large part of the database's work, for an answer
// that almost never changes. The answers are remembered for routeTTL.
//
// Only complete answers are remembered: every phone number id the webhook
// names has its route (or, for a webhook naming only business accounts, at
// least one route was found). A number whose account is verified a moment
// later is therefore looked up again on its next webhook, never dropped for
// routeTTL; and a webhook that remembered routes do not verify is checked
// again against fresh ones (an organization that just set or changed its
// app secret is never refused on a stale one). What routeTTL allows is the
// other direction: for up to two seconds after an account is deleted or an
// organization replaces its app secret, webhooks are still routed and
// verified the old way (a deleted account's events are refused by the
// database).
const (
	routeTTL = 2 * time.Second
	// maxCachedRoutes bounds the memory a flood of distinct (forged but
	// well-signed) number ids could take; past it the cache starts over.
	maxCachedRoutes = 10000
)

type cachedRoutes struct {
	routes  []accounts.Route
	expires time.Time
}

type routeCache struct {
	mu      sync.Mutex
	entries map[string]cachedRoutes
}

// routes answers accounts.Routes for the ids, from the cache when it can
// (cached reports it) unless fresh asks for the database.
func (s *Service) routes(ctx context.Context, phoneIDs, wabaIDs []string, fresh bool) (_ []accounts.Route, cached bool, _ error) {
	key := strings.Join(phoneIDs, ",") + "|" + strings.Join(wabaIDs, ",")
	now := s.now()
	c := &s.routeCache
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) && !fresh {
		return e.routes, true, nil
	}
	routes, err := s.accounts.Routes(ctx, phoneIDs, wabaIDs)
	if err != nil || !complete(routes, phoneIDs) {
		return routes, false, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= maxCachedRoutes {
		c.entries = map[string]cachedRoutes{}
	}
	c.entries[key] = cachedRoutes{routes: routes, expires: now.Add(routeTTL)}
	c.mu.Unlock()
	return routes, false, nil
}

// complete reports whether routes has a route for every phone number id
// (and at least one route).
func complete(routes []accounts.Route, phoneIDs []string) bool {
	if len(routes) == 0 {
		return false
	}
	for _, id := range phoneIDs {
		if !slices.ContainsFunc(routes, func(r accounts.Route) bool { return r.PhoneNumberID == id }) {
			return false
		}
	}
	return true
}
