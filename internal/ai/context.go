package ai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	// shorter): the model's answer waits for it.
	ContextFetchTimeout = 5 * time.Second
	// maxCachedContexts bounds the cache; past it, expired entries go
	// first, then any.
	maxCachedContexts = 1024
)

type cachedContext struct {
	text    string
	expires time.Time
}

// FetchContext returns the text at url, an `api` AI context, for the
// prompt: fetched with GET through the SSRF-safe client (so refused for an
// internal address unless the policy allows private targets), within
// ContextFetchTimeout, cut to its first ContextMaxBytes (at a character
// boundary), and reused for ContextTTL. Concurrent calls for one URL share
// one fetch. A non-2xx answer is an error; errors are not cached. Show an
// error to a user through safehttp.Public.
func (s *Service) FetchContext(ctx context.Context, url string) (string, error) {
	url = strings.TrimSpace(url)
	if text, ok := s.cached(url); ok {
		return text, nil
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
			return "", err
		}
		s.store(url, text)
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

func (s *Service) cached(url string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cache[url]
	if !ok || !s.now().Before(c.expires) {
		return "", false
	}
	return c.text, true
}

func (s *Service) store(url, text string) {
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
	s.cache[url] = cachedContext{text: text, expires: now.Add(ContextTTL)}
}
