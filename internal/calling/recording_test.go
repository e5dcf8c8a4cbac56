package calling_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/testfactory"
	"wharf/models"
)

// A recording URL is signed by the store for 900 s; a call of another
// organization, a call without a recording and a server without a store
// that signs are refused, each with its own answer.
func TestRecordingURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &memStore{}
	s, b := setup(t, calling.Config{}, store)
	if _, err := store.Put(ctx, "recordings/r1.ogg", strings.NewReader("OggS")); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	recorded := b.call(t, b.org.ID, now, func(l *models.CallLog) { l.RecordingKey, l.RecordingDuration = "recordings/r1.ogg", 42 })
	unrecorded := b.call(t, b.org.ID, now)
	theirs := b.call(t, b.f.Org().ID, now, func(l *models.CallLog) { l.RecordingKey = "recordings/r1.ogg" })

	url, exp, dur, err := s.RecordingURL(ctx, b.org.ID, recorded.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "https://store.example/recordings/r1.ogg?expires=") || dur != 42 || exp.Location() != time.UTC ||
		time.Until(exp) > calling.RecordingTTL || time.Until(exp) < calling.RecordingTTL-5*time.Second {
		t.Fatalf("url %q, expires %v, duration %d", url, exp, dur)
	}
	if len(store.ttls) != 1 || store.ttls[0] != 900*time.Second {
		t.Fatalf("asked the store for %v", store.ttls)
	}
	_, _, _, err = s.RecordingURL(ctx, b.org.ID, theirs.ID)
	testfactory.WantError(t, err, apperr.NotFound, calling.MsgCallLogNotFound)
	_, _, _, err = s.RecordingURL(ctx, b.org.ID, unrecorded.ID)
	testfactory.WantError(t, err, apperr.NotFound, "this call has no recording")

	// Without a store that signs: 503 for a recorded call, still 404 for
	// the others.
	bare, bb := setup(t, calling.Config{}, nil)
	l := bb.call(t, bb.org.ID, now, func(l *models.CallLog) { l.RecordingKey = "recordings/r1.ogg" })
	_, _, _, err = bare.RecordingURL(ctx, bb.org.ID, l.ID)
	testfactory.WantError(t, err, apperr.Unavailable, "recordings need object storage")
	_, _, _, err = bare.RecordingURL(ctx, bb.org.ID, bb.call(t, bb.org.ID, now).ID)
	testfactory.WantError(t, err, apperr.NotFound, "this call has no recording")
}
