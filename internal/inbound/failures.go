package inbound

import (
	"context"
	"slices"
	"sync"
	"time"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
)

// The webhooks refused per client address are limited: past 30 a minute
// the address is answered 429 before its body is read, so a flood of forged
// webhooks costs neither database work nor HMACs.
const (
	maxSourceFailures   = 30
	sourceFailureWindow = time.Minute
)

func failureKey(source, subject string) string {
	if subject == "" {
		return "wharf:webhook-failures:" + source
	}
	return "wharf:webhook-failures:" + source + ":" + subject
}

func tooManyFailures(wait time.Duration) error {
	return apperr.TooManyAfter(wait, "too many refused webhooks from this address; retry in %d seconds", int(wait.Seconds()+0.999))
}

// blocked reports how long the keys are blocked. Without Redis the limiter
// is skipped: refusing the provider's webhooks would lose messages.
//
// Asking Redis was a round trip per webhook, nearly always answered "not
// blocked" (the provider's addresses send nothing but good webhooks). A
// single key found unblocked is therefore believed for sourceCheckEvery
// unless this process counts a failure for it; failures counted by other
// api processes are seen that much later.
func (s *Service) blocked(ctx context.Context, keys ...string) time.Duration {
	if len(keys) == 1 && s.sourceCache.clear(keys[0], s.now()) {
		return 0
	}
	wait, err := s.limiter.Blocked(ctx, s.failures, keys...)
	if err != nil {
		s.log.Warn("webhook failure limiter unavailable; webhook allowed", "error", err)
		return 0
	}
	if wait == 0 && len(keys) == 1 {
		s.sourceCache.remember(keys[0], s.now())
	}
	return wait
}

func (s *Service) countFailure(ctx context.Context, key string) {
	s.sourceCache.forget(key)
	n, err := s.limiter.Fail(context.WithoutCancel(ctx), s.failures, key)
	switch {
	case err != nil:
		s.log.Warn("webhook failure limiter unavailable", "error", err)
	case n == s.failures.Max:
		s.log.Warn("refused webhooks: source blocked for the rest of the window", "key", key,
			"failures", n, "window", s.failures.Window)
	}
}

// sourceCheckEvery is how long a failure key found unblocked is believed.
const sourceCheckEvery = time.Second

// sourceCache remembers when failure keys were last found unblocked.
type sourceCache struct {
	mu      sync.Mutex
	checked map[string]time.Time
}

func (c *sourceCache) clear(key string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.checked[key]
	return ok && now.Sub(at) < sourceCheckEvery
}

func (c *sourceCache) remember(key string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.checked == nil || len(c.checked) >= maxCachedRoutes {
		c.checked = map[string]time.Time{} // bounded: many addresses start it over
	}
	c.checked[key] = now
}

func (c *sourceCache) forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.checked, key)
}

// blame picks the failure key of a webhook nothing verified: the source and
// the number of an organization with its own app secret when the webhook
// names one (that secret may be misconfigured, and the provider's shared
// addresses must stay usable for everyone else), else the source alone.
func blame(source string, routes []accounts.Route, phoneIDs []string) string {
	for _, r := range routes {
		if r.AppSecret == "" {
			continue
		}
		if slices.Contains(phoneIDs, r.PhoneNumberID) {
			return failureKey(source, r.PhoneNumberID)
		}
		return failureKey(source, r.BusinessAccountID)
	}
	return failureKey(source, "")
}
