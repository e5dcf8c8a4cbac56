package calling_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/calling"
)

// STUN from the configuration (a default when none), TURN only with URLs
// and a secret, its credentials coturn's REST-API ones, valid TURN_TTL
// (24 h by default, never more than 7 days).
func TestICEServers(t *testing.T) {
	t.Parallel()
	user := uuid.New()
	verify := func(t *testing.T, secret string, s calling.ICEServer, ttl time.Duration) {
		t.Helper()
		expiry, who, ok := strings.Cut(s.Username, ":")
		if !ok || who != user.String() {
			t.Fatalf("username %q", s.Username)
		}
		exp, err := strconv.ParseInt(expiry, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if left := time.Until(time.Unix(exp, 0)); left > ttl+time.Second || left < ttl-5*time.Second {
			t.Errorf("valid for %v, want %v", left, ttl)
		}
		mac := hmac.New(sha1.New, []byte(secret))
		mac.Write([]byte(s.Username))
		if s.Credential != base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
			t.Errorf("credential %q is not base64(HMAC-SHA1(secret, username))", s.Credential)
		}
	}

	got := calling.NewService(calling.Deps{}).ICEServers(user)
	if len(got) != 1 || len(got[0].URLs) != 1 || got[0].URLs[0] != "stun:stun.l.google.com:19302" || got[0].Username != "" {
		t.Fatalf("default %+v", got)
	}
	// A secret without relays (or relays without a secret) gives no TURN.
	for _, cfg := range []calling.Config{{TURNSecret: "s"}, {TURNURLs: []string{"turn:t.example:3478"}}} {
		if got := calling.NewService(calling.Deps{Config: cfg}).ICEServers(user); len(got) != 1 {
			t.Errorf("%+v: %+v", cfg, got)
		}
	}

	cfg := calling.Config{STUNURLs: []string{"stun:a.example:3478"}, TURNURLs: []string{"turn:t.example:3478", "turns:t.example:5349"},
		TURNSecret: "coturn-secret"}
	got = calling.NewService(calling.Deps{Config: cfg}).ICEServers(user)
	if len(got) != 2 || got[0].URLs[0] != "stun:a.example:3478" || len(got[1].URLs) != 2 || got[1].URLs[1] != "turns:t.example:5349" {
		t.Fatalf("configured %+v", got)
	}
	verify(t, "coturn-secret", got[1], 24*time.Hour)
	cfg.TURNTTL = time.Hour
	verify(t, "coturn-secret", calling.NewService(calling.Deps{Config: cfg}).ICEServers(user)[1], time.Hour)
	cfg.TURNTTL = 30 * 24 * time.Hour
	verify(t, "coturn-secret", calling.NewService(calling.Deps{Config: cfg}).ICEServers(user)[1], calling.MaxTURNTTL)

	// A known answer, computed with openssl (echo -n "1433895918:<nil
	// uuid>" | openssl dgst -sha1 -hmac north -binary | base64).
	u, c := calling.TURNCredentials("north", uuid.Nil, time.Unix(1433895918, 0))
	if u != "1433895918:00000000-0000-0000-0000-000000000000" || c != "VuIn2c38uracpI8NMGltQnB0YWw=" {
		t.Fatalf("credentials %q %q", u, c)
	}
}
