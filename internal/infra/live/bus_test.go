package live

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/testenv"
)

func newBus(t *testing.T) *Bus {
	t.Helper()
	b := NewBus(testenv.Redis(t, testenv.RedisURL(t)), testenv.Quiet())
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func numSub(t *testing.T, b *Bus, org uuid.UUID) int64 {
	t.Helper()
	n, err := b.rdb.PubSubNumSub(context.Background(), channel(org)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n[channel(org)]
}

// An organization's channel stays subscribed for linger after its last
// stream left (a reconnect reuses it), and is unsubscribed after.
func TestBusKeepsAQuietChannelForLinger(t *testing.T) {
	b := newBus(t)
	org := uuid.New()
	ctx := context.Background()
	s, err := b.Subscribe(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	b.sweep()
	if n := numSub(t, b, org); n != 1 {
		t.Fatalf("just after the last stream left: %d subscribers, want 1", n)
	}
	again, err := b.Subscribe(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	b.Publish(ctx, org, New(CampaignProgress, map[string]int{"n": 1}, Audience{}))
	select {
	case e := <-again.C():
		if e.Type != CampaignProgress || e.ID == "" {
			t.Fatalf("event %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reused subscription got nothing")
	}
	again.Close()
	b.now = func() time.Time { return time.Now().Add(linger + time.Second) }
	b.sweep()
	deadline := time.Now().Add(10 * time.Second)
	for numSub(t, b, org) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the quiet channel is still subscribed after linger")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Since: the events after a position, in order; reset for a position older
// than the stream's oldest event, for one that is not a position, and for
// an old one when nothing is kept; nothing (no reset) for a recent one when
// nothing is kept.
func TestBusSince(t *testing.T) {
	b := newBus(t)
	org := uuid.New()
	ctx := context.Background()
	if evs, reset, err := b.Since(ctx, org, "1-0"); err != nil || !reset || len(evs) != 0 {
		t.Fatalf("an old position, nothing kept: %v %v %v", evs, reset, err)
	}
	recent := time.Now().Add(-time.Second).UnixMilli()
	if evs, reset, err := b.Since(ctx, org, strconv.FormatInt(recent, 10)+"-0"); err != nil || reset || len(evs) != 0 {
		t.Fatalf("a recent position, nothing kept: %v %v %v", evs, reset, err)
	}
	for i := range 3 {
		b.Publish(ctx, org, New(CampaignProgress, map[string]int{"n": i}, Audience{}))
	}
	all, reset, err := b.Since(ctx, org, "0-1")
	if err != nil || !reset || all != nil {
		t.Fatalf("a position before the oldest: %v %v %v", all, reset, err)
	}
	first, _ := b.rdb.XRangeN(ctx, streamKey(org), "-", "+", 1).Result()
	evs, reset, err := b.Since(ctx, org, first[0].ID)
	if err != nil || reset || len(evs) != 2 || string(evs[0].Data) != `{"n":1}` || string(evs[1].Data) != `{"n":2}` {
		t.Fatalf("after the first: %+v %v %v", evs, reset, err)
	}
	if _, reset, _ := b.Since(ctx, org, "garbage"); !reset {
		t.Fatal("a position that is no position: no reset")
	}
}
