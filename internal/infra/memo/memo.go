// Package memo is a small in-process cache whose entries live for a fixed
// time. It is for lookups on hot paths that may be a few seconds stale
// because something later re-checks them exactly (the worker re-reads an
// account and its template before it sends); never for authorization,
// which must hold at once on every replica (identity's principal cache is
// versioned in Redis for that).
package memo

import (
	"sync"
	"time"
)

// Cache maps keys to values for ttl each. It is safe for concurrent use.
type Cache[K comparable, V any] struct {
	ttl time.Duration
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[K]entry[V]
}

type entry[V any] struct {
	v  V
	at time.Time
}

// New returns a cache of at most max entries (past it, it starts over) that
// keeps each for ttl.
func New[K comparable, V any](ttl time.Duration, max int) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: max, now: time.Now, entries: map[K]entry[V]{}}
}

// Get returns the value stored for k if it is younger than the ttl.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if !ok || c.now().Sub(e.at) >= c.ttl {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Put stores v for k.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	if len(c.entries) >= c.max {
		c.entries = map[K]entry[V]{}
	}
	c.entries[k] = entry[V]{v: v, at: c.now()}
	c.mu.Unlock()
}

// Clear forgets every entry: after a change made through this process, so
// that at least this process sees it at once.
func (c *Cache[K, V]) Clear() {
	c.mu.Lock()
	c.entries = map[K]entry[V]{}
	c.mu.Unlock()
}
