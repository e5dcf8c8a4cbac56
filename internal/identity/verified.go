package identity

import (
	"time"

	"github.com/google/uuid"
)

// Verified access tokens. A bearer request verified its token's HMAC and
// decoded its claims every time: 9% of the api's CPU under the resource
// API's insert benchmark (docs/BENCHMARKS.md, "Resource API inserts"). The
// outcome of that check depends only on the token's text, the secret and
// the clock, so a token verified once is remembered by its whole text
// until it expires; what a token may do is still read on every request
// (the principal, identity's versioned cache), so a demotion or removal
// takes effect at once as before. Only tokens that passed are kept: a
// refused one is checked again, and its text never becomes a key.

// maxVerified bounds the tokens remembered; past it the memory starts over
// (the next request of each verifies its token again).
const maxVerified = 10_000

type verifiedToken struct {
	userID, orgID uuid.UUID
	expires       time.Time
}

// recall answers a remembered token that has not expired.
func (t *Tokens) recall(raw string) (verifiedToken, bool) {
	t.mu.Lock()
	v, ok := t.verified[raw]
	t.mu.Unlock()
	if !ok || !t.now().Before(v.expires) {
		return verifiedToken{}, false
	}
	return v, true
}

// remember keeps a token that passed every check.
func (t *Tokens) remember(raw string, v verifiedToken) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.verified) >= maxVerified {
		clear(t.verified)
	}
	t.verified[raw] = v
}
