package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"wharf/jobs"
)

// Handle registers under the payload's own task type, decodes the payload
// for the handler and fails an undecodable one without retries.
func TestHandleDecodesItsPayloadType(t *testing.T) {
	t.Parallel()
	var got jobs.AccountRefresh
	h := jobs.Handle(func(_ context.Context, p jobs.AccountRefresh) error { got = p; return nil })
	if h.Type != jobs.TypeAccountRefresh {
		t.Fatalf("type %q, want %q", h.Type, jobs.TypeAccountRefresh)
	}
	want := jobs.AccountRefresh{OrganizationID: uuid.New(), AccountID: uuid.New()}
	body, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Handle(context.Background(), asynq.NewTask(jobs.TypeAccountRefresh, body)); err != nil || got != want {
		t.Fatalf("handled %+v, %v; want %+v", got, err, want)
	}
	err = h.Handle(context.Background(), asynq.NewTask(jobs.TypeAccountRefresh, []byte("{")))
	if !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("an undecodable payload: %v, want SkipRetry", err)
	}
	if jobs.LastAttempt(context.Background()) {
		t.Error("a context outside a task is no last attempt")
	}
}
