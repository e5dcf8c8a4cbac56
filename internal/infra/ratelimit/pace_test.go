package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"wharf/internal/infra/ratelimit"
	"wharf/internal/testenv"
)

// drain takes every token of the budget it can for d (asking for up to
// 100 every 5 ms) and answers how many it got.
func drain(t *testing.T, l *ratelimit.Limiter, key string, rate, reserve int, d time.Duration) int {
	t.Helper()
	got := 0
	for start := time.Now(); time.Since(start) < d; time.Sleep(5 * time.Millisecond) {
		n, _, err := l.Pace(context.Background(), key, rate, rate, reserve, 100)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	return got
}

// A new budget starts with one token (the first second is no faster than
// the rate), holds at most one second's worth (burst), and over any window
// of w seconds hands out at most rate × (w + 1).
func TestPaceStartsEmptyAndBurstsOneSecond(t *testing.T) {
	l := ratelimit.New(testenv.Redis(t, testenv.RedisURL(t)))
	ctx := context.Background()
	const rate = 20
	if n, _, err := l.Pace(ctx, "k", rate, rate, 0, 100); err != nil || n != 1 {
		t.Fatalf("a new budget gave %d (%v), want 1", n, err)
	}
	// The rest of the first second: the tokens that accrue, at most the
	// rate in all.
	if got := 1 + drain(t, l, "k", rate, 0, 950*time.Millisecond); got > rate {
		t.Fatalf("%d tokens in the first second at %d/s", got, rate)
	}
	time.Sleep(2 * time.Second) // idle, less than PaceIdle: a full budget
	if n, _, _ := l.Pace(ctx, "k", rate, rate, 0, 100); n != rate {
		t.Fatalf("after 2 s idle: %d tokens at once, want one second's worth (%d)", n, rate)
	}
	// Over the next two seconds, drawing continually: the rate.
	if got := rate + drain(t, l, "k", rate, 0, 2*time.Second); got > 3*rate || got < 2*rate {
		t.Fatalf("%d tokens in 2 s from a full budget at %d/s: want at most %d", got, rate, 3*rate)
	}
	// Forgotten after PaceIdle: one token again.
	time.Sleep(ratelimit.PaceIdle + 1500*time.Millisecond)
	if n, _, _ := l.Pace(ctx, "k", rate, rate, 0, 100); n != 1 {
		t.Fatalf("after %s idle: %d tokens, want 1", ratelimit.PaceIdle, n)
	}
}

// A caller with a reserve takes only what lies above it; the wait it is
// told is until a token above its reserve.
func TestPaceLeavesTheReserve(t *testing.T) {
	l := ratelimit.New(testenv.Redis(t, testenv.RedisURL(t)))
	ctx := context.Background()
	const rate = 10
	if n, _, _ := l.Pace(ctx, "r", rate, rate, 0, 1); n != 1 {
		t.Fatal("first token")
	}
	time.Sleep(1100 * time.Millisecond) // full: 10
	if n, _, _ := l.Pace(ctx, "r", rate, rate, 2, 100); n != rate-2 {
		t.Fatalf("reserve 2 took %d of %d", n, rate)
	}
	n, wait, _ := l.Pace(ctx, "r", rate, rate, 2, 100)
	if n != 0 || wait <= 0 || wait > 100*time.Millisecond {
		t.Fatalf("reserve 2 on 2 left: %d, wait %s; want 0 and at most one interval", n, wait)
	}
	if n, _, _ := l.Pace(ctx, "r", rate, rate, 1, 100); n != 1 {
		t.Fatalf("reserve 1 on 2 left took %d, want 1", n)
	}
	if n, _, _ := l.Pace(ctx, "r", rate, rate, 0, 100); n != 1 {
		t.Fatalf("reserve 0 on 1 left took %d, want 1", n)
	}
	// A new budget gives its first caller one token whatever its reserve.
	if n, _, _ := l.Pace(ctx, "fresh", rate, rate, 2, 100); n != 1 {
		t.Fatalf("a new budget gave a caller with a reserve %d tokens, want 1", n)
	}
	if _, _, err := l.Pace(ctx, "r", 0, 1, 0, 1); err == nil {
		t.Fatal("a zero rate must be refused")
	}
}
