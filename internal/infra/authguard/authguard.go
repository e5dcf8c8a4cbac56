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
	"strings"
	"time"

	"wharf/internal/infra/ratelimit"
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

// APIToken guards Frappe's "Authorization: token <api_key>:<api_secret>"
// on the resource API: like Login, keyed by the API key's id, so that
// failures for one key from one address lock that pair and a hundred from
// an address lock the address, while nobody can lock a key out for others.
func APIToken() Policy { return Policy{Window: 15 * time.Minute, PerAddress: 100, PerPair: 10} }

// Attempt is who is being signed in as, and from where.
type Attempt struct {
	Account string // as typed: compared lower-cased and trimmed
	Address string // the client address
}

// Guard counts one policy's failures under one Redis key prefix, in the
// fixed-window failure counters of internal/ratelimit.
type Guard struct {
	limiter *ratelimit.Limiter
	prefix  string
	policy  Policy
}

// New builds a guard; prefix separates the counters of different doors
// (monitoring, login).
func New(limiter *ratelimit.Limiter, prefix string, policy Policy) *Guard {
	return &Guard{limiter: limiter, prefix: prefix, policy: policy}
}

type counter struct {
	key   string
	limit ratelimit.FailureLimit
}

// counters are the Redis keys a's failures are counted under. Accounts are
// keyed by a hash, so that Redis holds no email addresses.
func (g *Guard) counters(a Attempt) []counter {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(a.Account))))
	account := hex.EncodeToString(sum[:16])
	limit := func(n int) ratelimit.FailureLimit { return ratelimit.FailureLimit{Max: n, Window: g.policy.Window} }
	var out []counter
	if g.policy.PerAccount > 0 {
		out = append(out, counter{g.prefix + ":acct:" + account, limit(g.policy.PerAccount)})
	}
	if g.policy.PerAddress > 0 {
		out = append(out, counter{g.prefix + ":addr:" + a.Address, limit(g.policy.PerAddress)})
	}
	if g.policy.PerPair > 0 {
		out = append(out, counter{g.prefix + ":pair:" + account + ":" + a.Address, limit(g.policy.PerPair)})
	}
	return out
}

// Locked reports whether a must be refused without checking its password,
// and for how long the lock lasts (at least a second).
func (g *Guard) Locked(ctx context.Context, a Attempt) (locked bool, retryAfter time.Duration, err error) {
	for _, c := range g.counters(a) {
		wait, err := g.limiter.Blocked(ctx, c.limit, c.key)
		if err != nil {
			return false, 0, err
		}
		retryAfter = max(retryAfter, wait)
	}
	if retryAfter > 0 {
		return true, max(retryAfter, time.Second), nil
	}
	return false, 0, nil
}

// Fail counts one failed attempt on every counter of a; the first failure of
// a window opens it.
func (g *Guard) Fail(ctx context.Context, a Attempt) error {
	for _, c := range g.counters(a) {
		if _, err := g.limiter.Fail(ctx, c.limit, c.key); err != nil {
			return err
		}
	}
	return nil
}
