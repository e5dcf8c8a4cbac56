package apptest

import (
	"testing"
	"time"
)

// A test's wait claims that something happens, not how fast: on a busy
// machine (make test on two CPUs beside other work, the race detector on)
// what takes a second when idle can take many. So every wait lasts up to
// WaitSlack times the time its caller names, and at least MinWait; the
// caller names what the condition needs on an idle machine, with a margin.
// A test that asserts a speed measures it (e2e/load), it does not wait for
// it.
const (
	WaitSlack = 3
	MinWait   = 30 * time.Second
)

// WaitLimit is how long a wait named d lasts.
func WaitLimit(d time.Duration) time.Duration { return max(d*WaitSlack, MinWait) }

// Eventually polls cond until it holds, for up to WaitLimit(timeout).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Await(t, timeout, what, func() (bool, string) { return cond(), "" })
}

// Await is Eventually for a check that also describes what it saw: a
// failure names what was awaited and the last state seen.
func Await(t testing.TB, timeout time.Duration, what string, check func() (done bool, seen string)) {
	t.Helper()
	limit := WaitLimit(timeout)
	deadline := time.Now().Add(limit)
	for {
		done, seen := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			if seen != "" {
				t.Fatalf("waited %s for %s; last seen: %s", limit, what, seen)
			}
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AwaitProgress is Await for work that takes as long as the machine makes
// it (a campaign of a thousand recipients, their status webhooks): it
// waits as long as the state check describes keeps changing, and fails
// when it stayed the same for WaitLimit(stall): a stall, not slowness. The
// description must change only with progress (counts, statuses; no clock
// readings).
func AwaitProgress(t testing.TB, stall time.Duration, what string, check func() (done bool, seen string)) {
	t.Helper()
	limit := WaitLimit(stall)
	start := time.Now()
	last, lastChange := "", start
	for {
		done, seen := check()
		if done {
			return
		}
		if seen != last {
			last, lastChange = seen, time.Now()
		}
		if time.Since(lastChange) > limit {
			t.Fatalf("waited %s for %s, the last %s without progress; last seen: %s", time.Since(start).Round(time.Second), what, limit, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
