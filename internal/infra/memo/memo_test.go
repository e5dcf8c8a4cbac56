package memo

import (
	"testing"
	"time"
)

func TestEntriesLiveForTheirTTL(t *testing.T) {
	now := time.Unix(0, 0)
	c := New[string, int](2*time.Second, 2)
	c.now = func() time.Time { return now }
	c.Put("a", 1)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("fresh entry: %d %v", v, ok)
	}
	now = now.Add(2 * time.Second)
	if _, ok := c.Get("a"); ok {
		t.Fatal("an entry outlived its ttl")
	}
	c.Put("a", 2)
	c.Put("b", 3)
	c.Put("c", 4) // past max: starts over
	if _, ok := c.Get("a"); ok {
		t.Fatal("the cache grew past its bound")
	}
	if v, ok := c.Get("c"); !ok || v != 4 {
		t.Fatal("the newest entry was lost")
	}
	c.Clear()
	if _, ok := c.Get("c"); ok {
		t.Fatal("Clear kept an entry")
	}
}
