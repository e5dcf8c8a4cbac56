package identity

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"wharf/internal/testenv"
)

// While every argon2 slot is taken, a password check waits, and gives up
// when its context ends without hashing anything.
func TestPasswordWorkIsBoundedAndWaitingRespectsContext(t *testing.T) {
	if got, want := cap(NewService(nil, nil, nil, testenv.Quiet()).hashSlots), max(2, runtime.NumCPU()); got != want {
		t.Fatalf("default concurrency %d, want %d", got, want)
	}
	s := NewService(nil, nil, nil, testenv.Quiet(), WithPasswordConcurrency(1))
	hash, err := s.hashPassword(context.Background(), "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	release, err := s.acquireHashSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before := s.PasswordWork()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.verifyPassword(ctx, hash, "correct horse"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("verify while the slot is taken: %v", err)
	}
	if _, err := s.hashPassword(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hash while the slot is taken: %v", err)
	}
	if s.PasswordWork() != before {
		t.Fatal("work was done without a slot")
	}
	release()
	if ok, err := s.verifyPassword(context.Background(), hash, "correct horse"); err != nil || !ok {
		t.Fatalf("verify after release: %v %v", ok, err)
	}
}
