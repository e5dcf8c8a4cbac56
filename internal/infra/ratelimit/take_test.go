package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"wharf/internal/infra/ratelimit"
	"wharf/internal/testenv"
)

// Take hands out at most the burst at once, then whole tokens at the rate,
// and never loses part of a token when fewer than asked are left.
func TestTakeGivesWholeTokensAtTheRate(t *testing.T) {
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	l := ratelimit.New(rdb)
	ctx := context.Background()
	n, _, err := l.Take(ctx, "k", 20, 10, 100)
	if err != nil || n != 10 {
		t.Fatalf("first take = %d, %v; want the burst of 10", n, err)
	}
	n, wait, err := l.Take(ctx, "k", 20, 10, 100)
	if err != nil || n != 0 || wait <= 0 || wait > 50*time.Millisecond {
		t.Fatalf("second take = %d, wait %s, %v; want 0 and at most one interval", n, wait, err)
	}
	// Over one second at 20/s, asking for 3 at a time every 20 ms, exactly
	// the rate is handed out (give or take the token in flight).
	got := 0
	start := time.Now()
	for time.Since(start) < time.Second {
		k, _, err := l.Take(ctx, "k", 20, 10, 3)
		if err != nil {
			t.Fatal(err)
		}
		got += k
		time.Sleep(20 * time.Millisecond)
	}
	if got < 18 || got > 21 {
		t.Fatalf("took %d tokens in a second at 20/s", got)
	}
	if _, _, err := l.Take(ctx, "k", 0, 1, 1); err == nil {
		t.Fatal("a zero rate must be refused")
	}
}
