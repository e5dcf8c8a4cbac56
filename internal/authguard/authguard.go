// Package authguard stops password guessing: it counts failed sign-ins per
// account, per source address and per (account, address) pair in Redis
// fixed windows, so the counts hold across api replicas, and tells the caller
// to refuse an attempt, before any password is checked, once a count has
// reached its limit. The window starts at the first failure and is not
// extended by later ones or by refused attempts, so a lockout always ends
// when that window does.
package authguard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Policy is how many failures a guard tolerates within Window. A zero limit
// means the dimension is not counted.
type Policy struct {
	Window     time.Duration
	PerAccount int // failures naming one account, from anywhere
	PerAddress int // failures from one source address, for any account
	PerPair    int // failures naming one account from one address
}

// Monitoring guards the job monitor's HTTP Basic sign-in: ten failures for an
// account, or from an address, lock that account or address out for the
// rest of the window, the right password included. Super admins keep access
// with a bearer token, which is not subject to this guard.
func Monitoring() Policy { return Policy{Window: 15 * time.Minute, PerAccount: 10, PerAddress: 10} }

// Login guards POST /api/auth/login. It does not count per account alone:
// that would let anyone lock the admin out by failing ten times. Ten
// failures lock one (account, address) pair; a hundred lock the address,
// which stops one source from spraying guesses over many accounts.
func Login() Policy { return Policy{Window: 15 * time.Minute, PerAddress: 100, PerPair: 10} }

// Attempt is who is being signed in as, and from where.
type Attempt struct {
	Account string // as typed: compared lower-cased and trimmed
	Address string // the client address
}

// Guard counts one policy's failures under one Redis key prefix.
type Guard struct {
	rdb    *redis.Client
	prefix string
	policy Policy
}

// New builds a guard; prefix separates the counters of different doors
// (monitoring, login).
func New(rdb *redis.Client, prefix string, policy Policy) *Guard {
	return &Guard{rdb: rdb, prefix: prefix, policy: policy}
}

type counter struct {
	key   string
	limit int
}

// counters are the Redis keys a's failures are counted under. Accounts are
// keyed by a hash, so that Redis holds no email addresses.
func (g *Guard) counters(a Attempt) []counter {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(a.Account))))
	account := hex.EncodeToString(sum[:16])
	var out []counter
	if g.policy.PerAccount > 0 {
		out = append(out, counter{g.prefix + ":acct:" + account, g.policy.PerAccount})
	}
	if g.policy.PerAddress > 0 {
		out = append(out, counter{g.prefix + ":addr:" + a.Address, g.policy.PerAddress})
	}
	if g.policy.PerPair > 0 {
		out = append(out, counter{g.prefix + ":pair:" + account + ":" + a.Address, g.policy.PerPair})
	}
	return out
}

// Locked reports whether a must be refused without checking its password,
// and for how long the lock lasts (at least a second).
func (g *Guard) Locked(ctx context.Context, a Attempt) (locked bool, retryAfter time.Duration, err error) {
	cs := g.counters(a)
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.key
	}
	vals, err := g.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return false, 0, err
	}
	for i, v := range vals {
		s, _ := v.(string)
		n, _ := strconv.Atoi(s)
		if v == nil || n < cs[i].limit {
			continue
		}
		locked = true
		ttl, err := g.rdb.PTTL(ctx, cs[i].key).Result()
		if err != nil {
			return true, g.policy.Window, err
		}
		retryAfter = max(retryAfter, ttl)
	}
	if locked {
		retryAfter = max(retryAfter, time.Second)
	}
	return locked, retryAfter, nil
}

// Fail counts one failed attempt on every counter of a. The expiry is set
// only by the first failure of a window (PEXPIRE NX), in the same transaction
// as the increment, so no counter is left without one.
func (g *Guard) Fail(ctx context.Context, a Attempt) error {
	_, err := g.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range g.counters(a) {
			p.Incr(ctx, c.key)
			p.Do(ctx, "PEXPIRE", c.key, g.policy.Window.Milliseconds(), "NX")
		}
		return nil
	})
	return err
}
