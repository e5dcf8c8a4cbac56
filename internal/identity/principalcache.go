package identity

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// principalCache keeps loaded principals in process so that an authenticated
// request does not re-read the user, membership, role and permissions from
// PostgreSQL. It stays exact across replicas through versions in Redis: a
// global one (changes to users, which act in every organization they belong
// to) and one per organization (members and roles). Every change that can
// alter a principal replaces the version after its commit; a cached principal
// is used only while both versions are still the ones read before it was
// loaded, which costs one MGET per request instead of the principal query.
//
// Versions are random strings, never counters, so that a version lost with
// Redis's data (a flush, a restart without persistence) can never come back
// equal to an old one: a missing version is set anew and nothing is served
// from the cache until it exists. When Redis does not answer, principals are
// read from PostgreSQL. maxAge bounds the life of an entry in case a change
// committed but its process died before it could replace the version.
type principalCache struct {
	rdb    redis.UniversalClient
	log    *slog.Logger
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[principalKey]cachedPrincipal
}

type principalKey struct{ user, org uuid.UUID }

type cachedPrincipal struct {
	p               Principal
	global, version string
	at              time.Time
}

// principalCacheMax bounds the entries kept; past it the cache starts over.
const principalCacheMax = 50_000

const principalsGlobalKey = "wharf:principals:v"

func principalsOrgKey(org uuid.UUID) string { return "wharf:principals:v:" + org.String() }

func newPrincipalCache(rdb redis.UniversalClient, maxAge time.Duration, log *slog.Logger) *principalCache {
	return &principalCache{rdb: rdb, log: log, maxAge: maxAge, now: time.Now, entries: map[principalKey]cachedPrincipal{}}
}

// get returns the principal of user in org, from the cache while its
// versions hold, else from load (and caches it).
func (c *principalCache) get(ctx context.Context, user, org uuid.UUID, load func() (*Principal, error)) (*Principal, error) {
	vals, err := c.rdb.MGet(ctx, principalsGlobalKey, principalsOrgKey(org)).Result()
	if err != nil {
		c.log.Warn("principal versions unavailable; reading the principal from the database", "error", err)
		return load()
	}
	global, gok := vals[0].(string)
	version, ook := vals[1].(string)
	if !gok || !ook {
		// A version is missing: create it, and read this principal without
		// the cache (the next request caches it under the new version).
		pipe := c.rdb.Pipeline()
		if !gok {
			pipe.SetNX(ctx, principalsGlobalKey, uuid.NewString(), 0)
		}
		if !ook {
			pipe.SetNX(ctx, principalsOrgKey(org), uuid.NewString(), 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			c.log.Warn("cannot create principal versions", "error", err)
		}
		return load()
	}
	k := principalKey{user, org}
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && e.global == global && e.version == version && now.Sub(e.at) < c.maxAge {
		p := e.p // a copy: callers set APIKeyID on theirs
		return &p, nil
	}
	// The versions were read before the load: a change that commits after
	// them replaces a version, so this entry is not used once it is stale.
	p, err := load()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) >= principalCacheMax {
		c.entries = map[principalKey]cachedPrincipal{}
	}
	c.entries[k] = cachedPrincipal{p: *p, global: global, version: version, at: now}
	c.mu.Unlock()
	return p, nil
}

// changed replaces the version of org (every organization when org is nil)
// after a change that can alter principals has committed. If Redis cannot be
// told, this process forgets its entries at least, and the others' expire
// within maxAge.
func (c *principalCache) changed(ctx context.Context, org *uuid.UUID) {
	key := principalsGlobalKey
	if org != nil {
		key = principalsOrgKey(*org)
	}
	if err := c.rdb.Set(context.WithoutCancel(ctx), key, uuid.NewString(), 0).Err(); err != nil {
		c.log.Error("cannot invalidate cached principals in other replicas; they expire on their own", "key", key, "error", err)
	}
	c.mu.Lock()
	for k := range c.entries {
		if org == nil || k.org == *org {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
}
