package calling_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// openCall is an answered incoming call of the bundle's account with a
// waiting transfer.
func (b *testBundle) openCall(t *testing.T, s *calling.Service) (models.CallLog, models.CallTransfer) {
	t.Helper()
	l := b.call(t, b.org.ID, time.Now(), func(l *models.CallLog) { l.Status, l.AccountID = models.CallRinging, &b.account.ID })
	tr, err := s.MarkAnswered(context.Background(), &l)
	if err != nil {
		t.Fatal(err)
	}
	return l, *tr
}

// Racing connects: exactly one claim wins, the others are 409s that change
// nothing; a transfer put back waits again.
func TestClaimTransferHasOneWinner(t *testing.T) {
	t.Parallel()
	s, b := setup(t, calling.Config{}, nil)
	ctx := context.Background()
	l, tr := b.openCall(t, s)
	agents := []uuid.UUID{b.f.User(b.org, "Agent").ID, b.f.User(b.org, "Agent").ID, b.f.User(b.org, "Agent").ID}
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() { _, errs[i] = s.ClaimTransfer(ctx, b.org.ID, tr.ID, a) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			testfactory.WantError(t, err, apperr.Conflict, "not waiting")
		}
	}
	if won != 1 {
		t.Fatalf("%d claims won: %v", won, errs)
	}
	// Another organization cannot claim it at all.
	other := b.f.Org()
	testfactory.WantError(t, func() error { _, err := s.ClaimTransfer(ctx, other.ID, tr.ID, agents[0]); return err }(), apperr.Conflict, "")
	if err := s.UnclaimTransfer(ctx, b.org.ID, tr.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimTransfer(ctx, b.org.ID, tr.ID, agents[2]); err != nil {
		t.Fatalf("claim after unclaim: %v", err)
	}
	var got models.CallLog
	b.f.DB.Take(&got, "id = ?", l.ID)
	if got.AgentID == nil || *got.AgentID != agents[2] {
		t.Fatalf("call log agent %v", got.AgentID)
	}
}

// Hold needs a connected agent; resume adds the hold's time to the
// transfer; Finish ends a call once, with the talk time less the holds.
func TestHoldResumeAndFinish(t *testing.T) {
	t.Parallel()
	s, b := setup(t, calling.Config{}, nil)
	ctx := context.Background()
	l, tr := b.openCall(t, s)
	testfactory.WantError(t, s.MarkHold(ctx, b.org.ID, l.ID), apperr.Conflict, "connected agent")
	agent := b.f.User(b.org, "Agent").ID
	if _, err := s.ClaimTransfer(ctx, b.org.ID, tr.ID, agent); err != nil {
		t.Fatal(err)
	}
	testfactory.WantError(t, s.MarkResume(ctx, b.org.ID, l.ID), apperr.Conflict, "not on hold")
	if err := s.MarkHold(ctx, b.org.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	// Two seconds on hold, as the clock of the database sees it.
	b.f.DB.Exec(`UPDATE call_logs SET hold_started_at = now() - interval '2 seconds' WHERE id = ?`, l.ID)
	b.f.DB.Exec(`UPDATE call_transfers SET connected_at = now() - interval '10 seconds' WHERE id = ?`, tr.ID)
	b.f.DB.Exec(`UPDATE call_logs SET answered_at = now() - interval '12 seconds' WHERE id = ?`, l.ID)
	if err := s.MarkResume(ctx, b.org.ID, l.ID); err != nil {
		t.Fatal(err)
	}
	ended, err := s.Finish(ctx, b.org.ID, l.ID, calling.End{By: calling.ByAgent})
	if err != nil || !ended {
		t.Fatalf("finish: %v %v", ended, err)
	}
	if again, err := s.Finish(ctx, b.org.ID, l.ID, calling.End{By: calling.ByCaller}); err != nil || again {
		t.Fatalf("a second finish: %v %v", again, err)
	}
	var gotL models.CallLog
	var gotT models.CallTransfer
	b.f.DB.Take(&gotL, "id = ?", l.ID)
	b.f.DB.Take(&gotT, "id = ?", tr.ID)
	if gotL.Status != models.CallCompleted || gotL.DisconnectedBy != calling.ByAgent || gotL.Duration != 12 || gotL.EndedAt == nil {
		t.Fatalf("call log %+v", gotL)
	}
	if gotT.Status != models.TransferCompleted || gotT.HoldDuration != 2 || gotT.TalkDuration != 8 {
		t.Fatalf("transfer %+v", gotT)
	}
}

// A caller who hangs up while waiting abandons the transfer and the call is
// missed; a transfer nobody took times out once.
func TestFinishWhileWaiting(t *testing.T) {
	t.Parallel()
	s, b := setup(t, calling.Config{}, nil)
	ctx := context.Background()
	l, tr := b.openCall(t, s)
	if _, err := s.Finish(ctx, b.org.ID, l.ID, calling.End{By: calling.ByCaller}); err != nil {
		t.Fatal(err)
	}
	var gotT models.CallTransfer
	var gotL models.CallLog
	b.f.DB.Take(&gotT, "id = ?", tr.ID)
	b.f.DB.Take(&gotL, "id = ?", l.ID)
	if gotT.Status != models.TransferAbandoned || gotL.Status != models.CallMissed {
		t.Fatalf("transfer %s, log %s", gotT.Status, gotL.Status)
	}
	_, tr2 := b.openCall(t, s)
	if ok, err := s.TransferTimedOut(ctx, b.org.ID, tr2.ID); !ok || err != nil {
		t.Fatalf("timeout: %v %v", ok, err)
	}
	if ok, _ := s.TransferTimedOut(ctx, b.org.ID, tr2.ID); ok {
		t.Fatal("a transfer timed out twice")
	}
}

// The transport: a request past its deadline is dropped (its sender gave
// up); a reply reaches the waiting sender with the error's kind.
func TestBridgeTransport(t *testing.T) {
	t.Parallel()
	rdb := testenv.Redis(t, testenv.RedisURL(t))
	br := calling.NewBridge(rdb, "instance-a")
	ctx := context.Background()
	if r, err := br.Next(ctx, 100*time.Millisecond); r != nil || err != nil {
		t.Fatalf("an empty queue gave %v %v", r, err)
	}
	call := uuid.New()
	if err := br.Own(ctx, call); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.TTL(ctx, "callbridge:owner:"+call.String()).Val(); ttl <= 0 || ttl > calling.OwnerLease {
		t.Fatalf("the owner's lease lasts %s", ttl)
	}
	stale, _ := json.Marshal(calling.Request{ID: "r1", Op: calling.OpHold, Deadline: time.Now().Add(-time.Second)})
	fresh, _ := json.Marshal(calling.Request{ID: "r2", Op: calling.OpResume, Deadline: time.Now().Add(time.Minute)})
	rdb.RPush(ctx, "callbridge:rpc:any", stale, fresh)
	if r, err := br.Next(ctx, 100*time.Millisecond); r != nil || err != nil {
		t.Fatalf("a request past its deadline was served: %+v %v", r, err)
	}
	if r, err := br.Next(ctx, 100*time.Millisecond); err != nil || r == nil || r.ID != "r2" {
		t.Fatalf("the fresh request: %+v %v", r, err)
	}
	rep := calling.ReplyFor("", apperr.Conflictf("the call has ended"))
	if err := rep.Err(); err == nil {
		t.Fatal("a failed reply is no error")
	} else {
		testfactory.WantError(t, err, apperr.Conflict, "the call has ended")
	}
	if rep := calling.ReplyFor("sdp", nil); rep.Err() != nil || rep.SDP != "sdp" {
		t.Fatalf("success reply %+v", rep)
	}
	if rep := calling.ReplyFor("", context.DeadlineExceeded); rep.Kind != apperr.Internal || rep.Message == "" {
		t.Fatalf("an internal error's reply %+v", rep)
	}
}
