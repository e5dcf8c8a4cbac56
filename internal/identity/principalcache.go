package identity

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"wharf/internal/infra/versioned"
)

// principalCache keeps loaded principals in process so that an authenticated
// request does not re-read the user, membership, role and permissions from
// PostgreSQL. It stays exact across replicas through versions in Redis
// (internal/versioned): a global one (changes to users, which act in every
// organization they belong to) and one per organization (members and
// roles). Every change that can alter a principal replaces a version after
// its commit.
type principalCache struct {
	c *versioned.Cache[principalKey, Principal]
}

type principalKey struct{ user, org uuid.UUID }

// principalCacheMax bounds the entries kept; past it the cache starts over.
const principalCacheMax = 50_000

const principalsGlobalKey = "wharf:principals:v"

func principalsOrgKey(org uuid.UUID) string { return "wharf:principals:v:" + org.String() }

func newPrincipalCache(rdb redis.UniversalClient, maxAge time.Duration, log *slog.Logger) *principalCache {
	return &principalCache{c: versioned.New[principalKey, Principal](rdb, maxAge, principalCacheMax, log)}
}

// get returns the principal of user in org, from the cache while its
// versions hold, else from load (and caches it).
func (c *principalCache) get(ctx context.Context, user, org uuid.UUID, load func() (*Principal, error)) (*Principal, error) {
	p, err := c.c.Get(ctx, principalKey{user, org}, []string{principalsGlobalKey, principalsOrgKey(org)}, func() (Principal, error) {
		p, err := load()
		if err != nil {
			return Principal{}, err
		}
		return *p, nil
	})
	if err != nil {
		return nil, err
	}
	return &p, nil // a copy: callers set APIKeyID on theirs
}

// changed replaces the version of org (every organization when org is nil)
// after a change that can alter principals has committed.
func (c *principalCache) changed(ctx context.Context, org *uuid.UUID) {
	if org == nil {
		c.c.Changed(ctx, principalsGlobalKey, func(principalKey) bool { return true })
		return
	}
	c.c.Changed(ctx, principalsOrgKey(*org), func(k principalKey) bool { return k.org == *org })
}
