package web

import "time"

// UTC renders times in UTC; JSON marshals them as RFC 3339.
func UTC(t time.Time) time.Time { return t.UTC() }

// UTCPtr is UTC for optional times.
func UTCPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
