package chatbot

import (
	"testing"

	"github.com/google/uuid"
)

// An organization gets at most limit slots; others are not affected, and a
// released slot can be taken again. Limit 0 bounds nothing.
func TestOrgSlots(t *testing.T) {
	t.Parallel()
	a, b := uuid.New(), uuid.New()
	o := newOrgSlots(2)
	if !o.acquire(a) || !o.acquire(a) {
		t.Fatal("the first two slots of A refused")
	}
	if o.acquire(a) || !o.full(a) {
		t.Fatal("a third slot for A, or A not full")
	}
	if o.full(b) || !o.acquire(b) {
		t.Fatal("B refused while A is at its share")
	}
	o.release(a)
	if !o.acquire(a) {
		t.Fatal("A refused after releasing a slot")
	}
	o.release(a)
	o.release(a)
	o.release(b)
	if len(o.held) != 0 {
		t.Fatalf("slots still counted after every release: %v", o.held)
	}
	unbounded := newOrgSlots(0)
	for range 100 {
		if !unbounded.acquire(a) {
			t.Fatal("limit 0 refused a slot")
		}
	}
}
