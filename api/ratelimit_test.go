package api_test

import (
	"strconv"
	"testing"
	"time"

	"wharf/internal/apptest"
)

func TestStandardRateLimitHoldsAcrossReplicas(t *testing.T) {
	e := apptest.New(t, map[string]string{"RATE_LIMIT_PER_MINUTE": "6"})
	admin := e.Admin() // login is one request of the client address, not of the user
	replica := e.Replica()
	for i := 0; i < 6; i++ {
		base := e.Server.URL
		if i%2 == 1 {
			base = replica.URL
		}
		r := e.DoAt(base, "GET", "/api/me", nil, admin.Auth()).Expect(t, 200)
		if r.Header.Get("X-RateLimit-Limit") != "6" || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(5-i) {
			t.Fatalf("request %d: limit %q remaining %q", i, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
		}
		reset, err := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
		now := time.Now().Unix()
		if err != nil || reset < now || reset > now+61 {
			t.Fatalf("X-RateLimit-Reset %q is not a Unix time within the minute", r.Header.Get("X-RateLimit-Reset"))
		}
	}
	for _, base := range []string{e.Server.URL, replica.URL} {
		r := e.DoAt(base, "GET", "/api/me", nil, admin.Auth()).Expect(t, 429)
		if r.Outcome != "error" || string(r.Data) != "null" || r.Message == "" || r.Header.Get("Retry-After") == "" ||
			r.Header.Get("X-RateLimit-Remaining") != "0" {
			t.Fatalf("429 answer: %v %s", r.Header, r.Body)
		}
	}
}

func TestRateLimitIsPerPrincipal(t *testing.T) {
	e := apptest.New(t, map[string]string{"RATE_LIMIT_PER_MINUTE": "4"})
	admin := e.Admin() // 1 request from the address
	var k struct{ Key string }
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, admin.Auth()).Expect(t, 201).Into(t, &k)
	for i := 0; i < 3; i++ {
		e.Do("GET", "/api/me", nil, admin.Auth()).Expect(t, 200)
	}
	e.Do("GET", "/api/me", nil, admin.Auth()).Expect(t, 429)
	// The key has its own allowance.
	for i := 0; i < 4; i++ {
		e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 200)
	}
	e.Do("GET", "/api/me", nil, apptest.APIKey(k.Key)).Expect(t, 429)
	// Unauthenticated requests are limited by client address, 401s and
	// unknown routes included.
	for i := 0; i < 3; i++ {
		r := e.Do("GET", "/api/nowhere", nil, nil).Expect(t, 404)
		if r.Header.Get("X-RateLimit-Limit") != "4" {
			t.Fatal("404 without rate limit headers")
		}
	}
	r := e.Do("GET", "/api/me", nil, nil).Expect(t, 429)
	if r.Header.Get("X-RateLimit-Reset") == "" {
		t.Fatal("429 without reset header")
	}
	// Health probes are exempt.
	e.Do("GET", "/healthz", nil, nil).Expect(t, 200)
}

func TestBulkRoutesHaveTheirOwnLowerLimit(t *testing.T) {
	e := apptest.New(t, map[string]string{"RATE_LIMIT_BULK_PER_MINUTE": "2", "RATE_LIMIT_PER_MINUTE": "50"})
	admin := e.Admin()
	for i := 0; i < 2; i++ {
		r := e.Upload("/api/org/audio", map[string]string{"type": "ringback"}, "file", "x", []byte("not audio"), admin.Auth()).Expect(t, 400)
		if r.Header.Get("X-RateLimit-Limit") != "2" {
			t.Fatalf("bulk limit header %q", r.Header.Get("X-RateLimit-Limit"))
		}
	}
	e.Upload("/api/org/audio", map[string]string{"type": "ringback"}, "file", "x", []byte("not audio"), admin.Auth()).Expect(t, 429)
	// Standard routes are unaffected.
	r := e.Do("GET", "/api/me", nil, admin.Auth()).Expect(t, 200)
	if r.Header.Get("X-RateLimit-Limit") != "50" {
		t.Fatalf("standard limit header %q", r.Header.Get("X-RateLimit-Limit"))
	}
}
