// Package apperr defines the error kinds that domain code returns and the api
// package maps to HTTP status codes in one place. Domain code never speaks
// HTTP; it says what went wrong (not found, invalid, conflict...) and gives a
// message that is safe to show to the caller.
package apperr

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind classifies an error for the caller.
type Kind int

// The kinds, in the order of their HTTP counterparts.
const (
	Internal     Kind = iota // 500: never shown with its cause
	Invalid                  // 400
	Unauthorized             // 401
	Forbidden                // 403
	NotFound                 // 404
	Conflict                 // 409
	TooLarge                 // 413
	TooMany                  // 429
	Upstream                 // 502: the provider failed
	Unavailable              // 503
)

// Error is an error with a kind and a message meant for the API caller.
type Error struct {
	Kind    Kind
	Message string
	Err     error // optional cause, for logs only
	// RetryAfter, when positive, tells the caller when to try again (the
	// Retry-After header of a 429 or 503).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func newf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Invalidf reports bad input (400).
func Invalidf(format string, args ...any) *Error { return newf(Invalid, format, args...) }

// Unauthorizedf reports missing or bad credentials (401).
func Unauthorizedf(format string, args ...any) *Error { return newf(Unauthorized, format, args...) }

// Forbiddenf reports an authenticated caller that may not do this (403).
func Forbiddenf(format string, args ...any) *Error { return newf(Forbidden, format, args...) }

// NotFoundf reports a missing resource, or one of another tenant (404).
func NotFoundf(format string, args ...any) *Error { return newf(NotFound, format, args...) }

// Conflictf reports a uniqueness or state conflict (409).
func Conflictf(format string, args ...any) *Error { return newf(Conflict, format, args...) }

// TooLargef reports an oversized upload (413).
func TooLargef(format string, args ...any) *Error { return newf(TooLarge, format, args...) }

// TooManyf reports a rate limit (429).
func TooManyf(format string, args ...any) *Error { return newf(TooMany, format, args...) }

// TooManyAfter reports a rate limit that lifts after d (429 with Retry-After).
func TooManyAfter(d time.Duration, format string, args ...any) *Error {
	e := newf(TooMany, format, args...)
	e.RetryAfter = d
	return e
}

// Upstreamf reports a failure of the provider that the caller may retry (502).
func Upstreamf(format string, args ...any) *Error { return newf(Upstream, format, args...) }

// Unavailablef reports that the server cannot do this now or as configured
// (503), such as a feature whose tool is not installed.
func Unavailablef(format string, args ...any) *Error { return newf(Unavailable, format, args...) }

// KindOf returns the kind of err, Internal when it carries none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err carries kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Clip shortens a message to at most n bytes for a bounded text column. It
// cuts on a rune boundary and drops invalid UTF-8, because PostgreSQL rejects
// such text and the update that records a provider's error would fail with it.
func Clip(s string, n int) string {
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}
