package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"wharf/internal/infra/ratelimit"
	"wharf/internal/testenv"
)

// Checking counts nothing; Max failures block the key until the window its
// first failure opened has passed; other keys are not affected.
func TestFailureLimit(t *testing.T) {
	ctx := context.Background()
	l := ratelimit.New(testenv.Redis(t, testenv.RedisURL(t)))
	lim := ratelimit.FailureLimit{Max: 3, Window: 700 * time.Millisecond}
	for range 10 {
		if wait, err := l.Blocked(ctx, lim, "a"); err != nil || wait != 0 {
			t.Fatalf("blocked before any failure: %s %v", wait, err)
		}
	}
	for i := 1; i <= 3; i++ {
		if n, err := l.Fail(ctx, lim, "a"); err != nil || n != i {
			t.Fatalf("failure %d counted as %d: %v", i, n, err)
		}
	}
	wait, err := l.Blocked(ctx, lim, "b", "a")
	if err != nil || wait <= 0 || wait > lim.Window {
		t.Fatalf("after 3 failures: blocked for %s (%v), want (0, 700ms]", wait, err)
	}
	if wait, _ := l.Blocked(ctx, lim, "b"); wait != 0 {
		t.Fatalf("another key blocked for %s", wait)
	}
	time.Sleep(wait + 50*time.Millisecond)
	if wait, _ := l.Blocked(ctx, lim, "a"); wait != 0 {
		t.Fatalf("still blocked for %s after the window", wait)
	}
	if n, _ := l.Fail(ctx, lim, "a"); n != 1 {
		t.Fatalf("a new window starts at %d failures", n)
	}
}
