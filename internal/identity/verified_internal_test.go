package identity

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
)

// A verified access token is remembered until it expires: the next request
// with it skips the signature check, an expired one is refused as before,
// and a refused token (a forged signature) is never remembered.
func TestVerifiedAccessTokensAreRememberedUntilTheyExpire(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tk := NewTokens("a secret of the tests, long enough", 15*time.Minute, time.Hour)
	tk.now = func() time.Time { return now }
	p := &Principal{UserID: uuid.New(), OrgID: uuid.New()}
	raw, err := tk.SignAccess(p)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		user, org, err := tk.ParseAccess(raw)
		if err != nil || user != p.UserID || org != p.OrgID {
			t.Fatalf("ParseAccess: %s %s %v", user, org, err)
		}
	}
	if _, ok := tk.verified[raw]; !ok || len(tk.verified) != 1 {
		t.Fatalf("the verified token was not remembered: %d entries", len(tk.verified))
	}

	// Another signature on the same claims: refused, not remembered.
	dot := strings.LastIndex(raw, ".")
	forged := raw[:dot+1] + strings.Repeat("A", len(raw)-dot-1)
	if _, _, err := tk.ParseAccess(forged); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("a forged token: %v", err)
	}
	if _, ok := tk.verified[forged]; ok {
		t.Fatal("a forged token was remembered")
	}

	// Past its expiry the remembered token is refused as an expired one.
	now = now.Add(16 * time.Minute)
	if _, _, err := tk.ParseAccess(raw); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("an expired remembered token: %v", err)
	}

	// The memory is bounded.
	for i := range maxVerified + 5 {
		tk.remember(string(rune(i))+"x", verifiedToken{expires: now.Add(time.Hour)})
	}
	if len(tk.verified) > maxVerified {
		t.Fatalf("%d tokens remembered, at most %d", len(tk.verified), maxVerified)
	}
}
