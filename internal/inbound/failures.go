package inbound

import (
	"context"
	"slices"
	"time"

	"wharf/internal/accounts"
	"wharf/internal/apperr"
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
func (s *Service) blocked(ctx context.Context, keys ...string) time.Duration {
	wait, err := s.limiter.Blocked(ctx, s.failures, keys...)
	if err != nil {
		s.log.Warn("webhook failure limiter unavailable; webhook allowed", "error", err)
		return 0
	}
	return wait
}

func (s *Service) countFailure(ctx context.Context, key string) {
	n, err := s.limiter.Fail(context.WithoutCancel(ctx), s.failures, key)
	switch {
	case err != nil:
		s.log.Warn("webhook failure limiter unavailable", "error", err)
	case n == s.failures.Max:
		s.log.Warn("refused webhooks: source blocked for the rest of the window", "key", key,
			"failures", n, "window", s.failures.Window)
	}
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
