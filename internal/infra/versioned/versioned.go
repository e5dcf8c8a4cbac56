// Package versioned keeps values in process that must stay exact across
// replicas: each value is used only while the versions in Redis it was
// loaded under are still current, and every change that can alter it
// replaces a version after its commit. A read costs one MGET instead of the
// query behind the value.
//
// Versions are random strings, never counters, so that a version lost with
// Redis's data (a flush, a restart without persistence) can never come back
// equal to an old one: a missing version is set anew and nothing is served
// from the cache until it exists. When Redis does not answer, values are
// loaded every time. maxAge bounds the life of an entry in case a change
// committed but its process died before it could replace the version.
package versioned

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Cache maps keys to values under versions. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	rdb    redis.UniversalClient
	log    *slog.Logger
	maxAge time.Duration
	max    int
	now    func() time.Time

	mu      sync.Mutex
	entries map[K]entry[V]
}

type entry[V any] struct {
	v        V
	versions []string
	at       time.Time
}

// New returns a cache of at most max entries (past it, it starts over).
func New[K comparable, V any](rdb redis.UniversalClient, maxAge time.Duration, max int, log *slog.Logger) *Cache[K, V] {
	return &Cache[K, V]{rdb: rdb, log: log, maxAge: maxAge, max: max, now: time.Now, entries: map[K]entry[V]{}}
}

// Get returns the value of k: from memory while the versions named by
// versionKeys hold, else from load (and keeps it).
func (c *Cache[K, V]) Get(ctx context.Context, k K, versionKeys []string, load func() (V, error)) (V, error) {
	return c.GetKeeping(ctx, k, versionKeys, load, nil)
}

// GetKeeping is Get that keeps only the loaded values keep accepts (nil:
// every value): the others are loaded on every read.
func (c *Cache[K, V]) GetKeeping(ctx context.Context, k K, versionKeys []string, load func() (V, error), keep func(V) bool) (V, error) {
	vals, err := c.rdb.MGet(ctx, versionKeys...).Result()
	if err != nil {
		c.log.Warn("cache versions unavailable; loading from the database", "error", err)
		return load()
	}
	versions := make([]string, len(vals))
	pipe := c.rdb.Pipeline()
	missing := false
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			// Create the version; this value is loaded without the cache
			// (the next read keeps it under the new version).
			pipe.SetNX(ctx, versionKeys[i], uuid.NewString(), 0)
			missing = true
		}
		versions[i] = s
	}
	if missing {
		if _, err := pipe.Exec(ctx); err != nil {
			c.log.Warn("cannot create cache versions", "error", err)
		}
		return load()
	}
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && slices.Equal(e.versions, versions) && now.Sub(e.at) < c.maxAge {
		return e.v, nil
	}
	// The versions were read before the load: a change that commits after
	// them replaces one, and this entry is not used again.
	v, err := load()
	if err != nil || (keep != nil && !keep(v)) {
		return v, err
	}
	c.mu.Lock()
	if len(c.entries) >= c.max {
		c.entries = map[K]entry[V]{}
	}
	c.entries[k] = entry[V]{v: v, versions: versions, at: now}
	c.mu.Unlock()
	return v, nil
}

// Last answers the value this process last kept for k, without asking
// Redis whether its versions still hold: a hint for work that may be
// skipped or done later (it may be stale), never a value to act on.
func (c *Cache[K, V]) Last(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e.v, ok
}

// Changed replaces the version versionKey after a change that can alter the
// values kept under it has committed, and forgets this process's entries
// for which covers says so. If Redis cannot be told, the other processes'
// entries expire within maxAge.
func (c *Cache[K, V]) Changed(ctx context.Context, versionKey string, covers func(K) bool) {
	if err := c.rdb.Set(context.WithoutCancel(ctx), versionKey, uuid.NewString(), 0).Err(); err != nil {
		c.log.Error("cannot invalidate cached values in other processes; they expire on their own", "key", versionKey, "error", err)
	}
	c.mu.Lock()
	for k := range c.entries {
		if covers(k) {
			delete(c.entries, k)
		}
	}
	c.mu.Unlock()
}
