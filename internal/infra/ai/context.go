package ai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The limits of an `api` AI context.
const (
	// ContextMaxBytes caps the text kept of a context URL's answer: the
	// rest is not read (and would crowd the conversation out of the prompt).
	ContextMaxBytes = 32 << 10
	// ContextTTL is how long a fetched context is reused: every incoming
	// message of a busy organization would otherwise fetch it again.
	ContextTTL = 60 * time.Second
	// ContextFetchTimeout bounds a fetch (or the Service's timeout, if
	// shorter), and FetchContexts' fetches all together: the model's
	// answer waits for them.
	ContextFetchTimeout = 5 * time.Second
	// ContextFailureTTL is how long a failed fetch is remembered: a context
	// server that is down or hangs would otherwise cost every message of
	// the organization a fetch (up to ContextFetchTimeout) until it is back.
	ContextFailureTTL = 30 * time.Second
	// maxCachedContexts bounds the cache; past it, expired entries go
	// first, then any.
	maxCachedContexts = 1024
)

type cachedContext struct {
	text    string
	err     error // a failed fetch, remembered until expires
	expires time.Time
}

// ContextResult is one context of FetchContexts: its text, or why it could
// not be fetched.
type ContextResult struct {
	Text string
	Err  error
}

// FetchContexts fetches the `api` AI contexts at urls at once, all within
// one budget (ContextFetchTimeout, or the Service's timeout if shorter,
// counted from this call): a prompt with several slow contexts waits for
// the slowest, not for their sum. Each URL is fetched as FetchContext
// does (cache, remembered failures, shared fetches); the results are in
// the order of urls.
func (s *Service) FetchContexts(ctx context.Context, urls []string) []ContextResult {
	ctx, cancel := context.WithTimeout(ctx, s.fetchTimeout)
	defer cancel()
	out := make([]ContextResult, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() { out[i].Text, out[i].Err = s.FetchContext(ctx, u) })
	}
	wg.Wait()
	return out
}

// FetchContext returns the text at url, an `api` AI context, for the
// prompt: fetched with GET through the SSRF-safe client (so refused for an
// internal address unless the policy allows private targets), within
// ContextFetchTimeout, cut to its first ContextMaxBytes (at a character
// boundary), and reused for ContextTTL. Concurrent calls for one URL share
// one fetch. A non-2xx answer is an error; a failed fetch is remembered for
// ContextFailureTTL (its error is answered without asking again). Show an
// error to a user through safehttp.Public.
func (s *Service) FetchContext(ctx context.Context, url string) (string, error) {
	url = strings.TrimSpace(url)
	if c, ok := s.cached(url); ok {
		return c.text, c.err
	}
	if err := s.policy.ValidateURL(url); err != nil {
		return "", fmt.Errorf("ai: context URL: %w", err)
	}
	ch := s.group.DoChan(url, func() (any, error) {
		// The fetch is shared, so it does not end with the first caller's
		// context; the timeout bounds it.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.fetchTimeout)
		defer cancel()
		text, err := s.fetchContext(fctx, url)
		if err != nil {
			s.store(url, cachedContext{err: err}, ContextFailureTTL)
			return "", err
		}
		s.store(url, cachedContext{text: text}, ContextTTL)
		return text, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return "", r.Err
		}
		return r.Val.(string), nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("%w: context %s", ErrTimeout, url)
		}
		return "", ctx.Err()
	}
}

func (s *Service) fetchContext(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("ai: context URL: %w", err)
	}
	req.Header.Set("Accept", "application/json, text/plain;q=0.9, */*;q=0.5")
	res, err := s.fetch.Do(req)
	if err != nil {
		if timedOut(ctx, err) {
			return "", fmt.Errorf("%w: context %s after %s", ErrTimeout, url, s.fetchTimeout)
		}
		return "", fmt.Errorf("ai: context %s: %w", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return "", fmt.Errorf("ai: context %s answered %d", url, res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, ContextMaxBytes))
	if err != nil {
		if timedOut(ctx, err) {
			return "", fmt.Errorf("%w: context %s after %s", ErrTimeout, url, s.fetchTimeout)
		}
		return "", fmt.Errorf("ai: context %s: %w", url, err)
	}
	// The cut may split the last character: drop its first bytes rather
	// than send a replacement character to the model.
	if len(body) == ContextMaxBytes {
		for i := 1; i <= utf8.UTFMax && i <= len(body); i++ {
			if utf8.RuneStart(body[len(body)-i]) {
				if !utf8.FullRune(body[len(body)-i:]) {
					body = body[:len(body)-i]
				}
				break
			}
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD"), nil
}

func (s *Service) cached(url string) (cachedContext, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cache[url]
	if !ok || !s.now().Before(c.expires) {
		return cachedContext{}, false
	}
	return c, true
}

// store keeps c, a fetched text or a failure, for ttl.
func (s *Service) store(url string, c cachedContext, ttl time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.cache) >= maxCachedContexts {
		for k, c := range s.cache {
			if !now.Before(c.expires) {
				delete(s.cache, k)
			}
		}
		for k := range s.cache {
			if len(s.cache) < maxCachedContexts {
				break
			}
			delete(s.cache, k)
		}
	}
	c.expires = now.Add(ttl)
	s.cache[url] = c
}
