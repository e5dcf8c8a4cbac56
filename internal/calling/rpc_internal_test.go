package calling

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
)

// An organization has at most MaxInFlight control requests waiting for a
// callbridge: past it a 429 at once that sends nothing; another
// organization is not held back; once replies come, requests are admitted
// again (nothing stays counted).
func TestControlRequestsInFlightAreBoundedPerOrganization(t *testing.T) {
	t.Parallel()
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	s := &Service{rdb: rdb, cfg: Config{MaxInFlight: 2}}
	bridge := NewBridge(rdb, "bound-test")
	queue := instanceQueue(bridge.Instance)
	ctx := context.Background()
	org, other := uuid.New(), uuid.New()

	errs := make(chan error, 3)
	for range 2 {
		go func() {
			_, err := s.call(ctx, queue, &Request{Op: OpHold, OrgID: org, CallLogID: uuid.New()}, 30*time.Second)
			errs <- err
		}()
	}
	// In flight and queued: a request is counted before it is pushed, so
	// both are waited for before the third is refused (CI saw one pushed).
	waitFor(t, "two requests in flight and queued", func() bool {
		return rdb.ZCard(ctx, inFlightKey(org)).Val() == 2 && rdb.LLen(ctx, queue).Val() == 2
	})

	start := time.Now()
	_, err := s.call(ctx, queue, &Request{Op: OpHold, OrgID: org, CallLogID: uuid.New()}, 30*time.Second)
	if !apperr.Is(err, apperr.TooMany) || !strings.Contains(err.Error(), "too many call-control requests in progress for this organization (at most 2 at once)") {
		t.Fatalf("the third request: %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("the refusal took %v: it must not wait for the callbridge", time.Since(start))
	}
	if n := rdb.LLen(ctx, queue).Val(); n != 2 {
		t.Fatalf("%d requests queued, want the 2 admitted ones", n)
	}

	// Another organization's request goes through.
	go func() {
		_, err := s.call(ctx, queue, &Request{Op: OpHold, OrgID: other, CallLogID: uuid.New()}, 30*time.Second)
		errs <- err
	}()
	waitFor(t, "the other organization's request queued", func() bool { return rdb.LLen(ctx, queue).Val() == 3 })

	// The callbridge answers all three: every sender returns and the sets
	// empty, so the organization may send again.
	for range 3 {
		r, err := bridge.Next(ctx, 10*time.Second)
		if err != nil || r == nil {
			t.Fatalf("next: %v %v", r, err)
		}
		if err := bridge.Answer(ctx, r, Reply{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatalf("an admitted request: %v", err)
		}
	}
	if n := rdb.ZCard(ctx, inFlightKey(org)).Val() + rdb.ZCard(ctx, inFlightKey(other)).Val(); n != 0 {
		t.Fatalf("%d requests still counted after their replies", n)
	}
	go func() {
		r, _ := bridge.Next(ctx, 10*time.Second)
		if r != nil {
			_ = bridge.Answer(ctx, r, Reply{})
		}
	}()
	if _, err := s.call(ctx, queue, &Request{Op: OpHold, OrgID: org, CallLogID: uuid.New()}, 30*time.Second); err != nil {
		t.Fatalf("after the replies: %v", err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
