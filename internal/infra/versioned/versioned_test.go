package versioned_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"wharf/internal/infra/versioned"
	"wharf/internal/testenv"
)

func TestValuesHoldWhileTheirVersionsDo(t *testing.T) {
	ctx := context.Background()
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	c := versioned.New[string, int](rdb, time.Hour, 10, testenv.Quiet())
	loads := 0
	value := 1
	get := func(k string, keys ...string) int {
		t.Helper()
		v, err := c.Get(ctx, k, keys, func() (int, error) { loads++; return value, nil })
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	get("a", "v:1", "v:2") // versions missing: created, loaded without the cache
	get("a", "v:1", "v:2") // loaded and kept
	if v := get("a", "v:1", "v:2"); v != 1 || loads != 2 {
		t.Fatalf("value %d after %d loads, want 1 from memory after 2", v, loads)
	}
	value = 2
	c.Changed(ctx, "v:2", func(string) bool { return false }) // another process's change
	if v := get("a", "v:1", "v:2"); v != 2 {
		t.Fatalf("value %d after its version changed, want 2", v)
	}
	// Last answers the kept value without asking Redis, stale or not.
	c.Changed(ctx, "v:2", func(string) bool { return false })
	if v, ok := c.Last("a"); !ok || v != 2 {
		t.Fatalf("Last: %d %v, want the kept 2", v, ok)
	}
	if _, ok := c.Last("none"); ok {
		t.Fatal("Last answered a value never kept")
	}
	// A failed load is not kept.
	_, err := c.Get(ctx, "b", []string{"v:1"}, func() (int, error) { return 0, errors.New("boom") })
	if err == nil {
		t.Fatal("the load's error was lost")
	}
	before := loads
	get("b", "v:1")
	if loads != before+1 {
		t.Fatal("a failed load was cached")
	}
	// GetKeeping keeps only what keep accepts: the others load every time.
	loadsOf := func(value int) int {
		t.Helper()
		before := loads
		v, err := c.GetKeeping(ctx, "c", []string{"v:1"}, func() (int, error) { loads++; return value, nil },
			func(v int) bool { return v%2 == 0 })
		if err != nil || v != value {
			t.Fatalf("GetKeeping: %d, %v; want %d", v, err, value)
		}
		return loads - before
	}
	if n := loadsOf(3) + loadsOf(3); n != 2 {
		t.Fatalf("%d loads for two reads of a value keep refuses, want 2", n)
	}
	loadsOf(4)
	if n := loadsOf(4); n != 0 {
		t.Fatalf("%d loads for a value keep accepted, want it from memory", n)
	}
	if _, ok := c.Last("c"); !ok {
		t.Fatal("the accepted value was not kept")
	}
}
