package dataops

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
)

// ExportSlots bounds the exports one api process streams at once, in all
// and per organization. An export holds a database connection (its cursor's
// transaction) for as long as its client takes to read the file, so without
// a bound a few slow or stalled clients could take every connection of the
// pool and stall every other request of every tenant. The bound is per
// process, like the pool it protects.
type ExportSlots struct {
	mu     sync.Mutex
	total  int
	perOrg int
	used   int
	byOrg  map[uuid.UUID]int
}

// exportRetryAfter is the Retry-After of a refused export: exports are
// quick (a million contacts take seconds) unless their client is slow.
const exportRetryAfter = 5 * time.Second

// NewExportSlots allows total exports at once in the process, at most
// perOrg of them for one organization.
func NewExportSlots(total, perOrg int) *ExportSlots {
	return &ExportSlots{total: total, perOrg: min(perOrg, total), byOrg: map[uuid.UUID]int{}}
}

// Take reserves a slot for an export of the organization, or refuses with
// a 429 naming the limit. The release function frees it; it may be called
// more than once.
func (s *ExportSlots) Take(orgID uuid.UUID) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byOrg[orgID] >= s.perOrg {
		return nil, apperr.TooManyAfter(exportRetryAfter,
			"too many exports in progress: an organization may run at most %d at a time; try again when one has finished", s.perOrg)
	}
	if s.used >= s.total {
		return nil, apperr.TooManyAfter(exportRetryAfter, "too many exports in progress on this server (at most %d); try again shortly", s.total)
	}
	s.used++
	s.byOrg[orgID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.used--
			if s.byOrg[orgID]--; s.byOrg[orgID] == 0 {
				delete(s.byOrg, orgID)
			}
		})
	}, nil
}
