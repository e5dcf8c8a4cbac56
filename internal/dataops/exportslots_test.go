package dataops

import (
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
)

// Export slots: at most perOrg for one organization, at most total in all;
// a refusal is a 429 naming the limit; a release frees the slot once, even
// when called twice.
func TestExportSlotsBoundEachOrganizationAndTheProcess(t *testing.T) {
	t.Parallel()
	s := NewExportSlots(4, 2)
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	take := func(org uuid.UUID) func() {
		t.Helper()
		release, err := s.Take(org)
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return release
	}
	refused := func(org uuid.UUID, want string) {
		t.Helper()
		if _, err := s.Take(org); !apperr.Is(err, apperr.TooMany) || err.Error() != want {
			t.Fatalf("got %v, want a 429 %q", err, want)
		}
	}
	ra := take(a)
	take(a)
	refused(a, "too many exports in progress: an organization may run at most 2 at a time; try again when one has finished")
	take(b)
	take(b)
	refused(c, "too many exports in progress on this server (at most 4); try again shortly")
	ra()
	ra() // a second call frees nothing more
	take(c)
	refused(a, "too many exports in progress on this server (at most 4); try again shortly")
}
