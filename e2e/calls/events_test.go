package calls_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"wharf/internal/apptest"
)

// A call's ringing (its waiting transfer, published by the callbridge) and
// its end (published by the worker's inbound processing) reach an open
// event stream, with the caller's number as the event's contact.
func TestCallEventsReachTheStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, 0)
	s := e.OpenStream(e.Server.URL, "/api/events", e.admin, nil)
	if s.Status != 200 {
		t.Fatalf("stream: %d %s", s.Status, s.Body)
	}
	if c, ok := s.Comment(apptest.MinWait); !ok || c != "connected" {
		t.Fatalf("no connected comment: %q", c)
	}
	sc, tr := e.call()
	type callEvent struct {
		Type    string `json:"type"`
		Contact struct {
			PhoneNumber string `json:"phone_number"`
		} `json:"contact"`
		Data struct {
			CallLogID      string `json:"call_log_id"`
			CallTransferID string `json:"call_transfer_id"`
			Status         string `json:"status"`
		} `json:"data"`
	}
	next := func(typ string) callEvent {
		t.Helper()
		deadline := time.Now().Add(apptest.MinWait)
		for time.Now().Before(deadline) {
			ev, ok := s.Next(time.Until(deadline))
			if !ok {
				break
			}
			var ce callEvent
			if err := json.Unmarshal([]byte(ev.Data), &ce); err != nil {
				t.Fatal(err)
			}
			if ce.Type == typ {
				return ce
			}
		}
		t.Fatalf("no %s event", typ)
		return callEvent{}
	}
	ring := next("call.ringing")
	if l := e.callLog(tr.CallLogID); ring.Data.CallTransferID != tr.ID || ring.Data.CallLogID != tr.CallLogID ||
		ring.Data.Status != "waiting" || ring.Contact.PhoneNumber == "" || ring.Contact.PhoneNumber != l.CallerPhone {
		t.Fatalf("ringing %+v, transfer %+v, call log %+v", ring, tr, l)
	}
	if _, err := e.Sim.TerminateCall(context.Background(), sc.ID); err != nil {
		t.Fatal(err)
	}
	if end := next("call.ended"); end.Data.CallLogID != tr.CallLogID || end.Data.Status != "missed" {
		t.Fatalf("ended %+v", end)
	}
}
