package callbridge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
)

// With every slot taken, a control request somebody waits for is answered
// at once with a 503 that says the callbridge is busy, and an event nobody
// waits for (the provider's) waits for a slot instead of being dropped or
// served past the bound.
func TestBusyCallbridgeRefusesControlAndKeepsEvents(t *testing.T) {
	t.Parallel()
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	s := New(Deps{Bridge: calling.NewBridge(rdb, "busy-test"), Log: testenv.Quiet(), Config: Config{MaxRequests: 2}})
	ctx := context.Background()
	s.slots <- struct{}{} // two requests in progress
	s.slots <- struct{}{}

	req := &calling.Request{ID: "r1", Op: calling.OpHold, OrgID: uuid.New(), CallLogID: uuid.New(), ReplyTo: "callbridge:reply:r1",
		Deadline: time.Now().Add(time.Minute)}
	s.dispatch(ctx, req)
	res, err := rdb.BLPop(ctx, 10*time.Second, req.ReplyTo).Result()
	if err != nil {
		t.Fatalf("no answer to a request past the bound: %v", err)
	}
	var rep calling.Reply
	if err := json.Unmarshal([]byte(res[1]), &rep); err != nil {
		t.Fatal(err)
	}
	if err := rep.Err(); !apperr.Is(err, apperr.Unavailable) ||
		!strings.Contains(err.Error(), "the callbridge is busy: 2 call-control requests are in progress") {
		t.Fatalf("reply %+v", rep)
	}
	if len(s.slots) != 2 {
		t.Fatalf("the refusal took a slot: %d", len(s.slots))
	}

	done := make(chan struct{})
	go func() {
		s.dispatch(ctx, &calling.Request{ID: "e1", Op: calling.OpRemoteProgress, OrgID: uuid.New(), CallLogID: uuid.New(), Status: "RINGING"})
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("an event was let past the bound (or dropped) while every slot was taken")
	case <-time.After(300 * time.Millisecond):
	}
	<-s.slots // one request in progress ends
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the event did not get the freed slot")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(s.slots) != 1 { // the event was served and gave its slot back
		if time.Now().After(deadline) {
			t.Fatalf("%d slots taken after the event, want 1", len(s.slots))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
