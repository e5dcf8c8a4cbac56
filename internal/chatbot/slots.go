package chatbot

import (
	"errors"
	"sync"

	"github.com/google/uuid"
)

// An evaluation that calls a server the organization chose (its model
// server, its `api` AI contexts, an api_fetch step) holds a worker slot for
// as long as that server takes: up to AI_TIMEOUT for the model, seconds
// for the others. So that one organization whose server hangs cannot take
// every slot of the worker, and with them the replies of every other
// organization (and the inbound processing they wait on), each
// organization may have at most a few such evaluations under way in this
// process at once (CHATBOT_ORG_CONCURRENCY; by default a quarter of
// WORKER_CONCURRENCY). An evaluation past its organization's share does not
// wait in its slot: it is rolled back and its task retried a second later
// (Evaluate answers jobs.RateLimited), so the slot goes to someone else.
// While every slot of the organization is taken, its tasks are put back at
// once, before any database work (so a backlog of waiting messages costs a
// Redis round trip per message and second, not an evaluation), which also
// holds back its evaluations that would call nothing: the organization's
// messages wait their turn, in order per contact.
//
// The bound is per process because the resource it shares out is: the
// slots of this worker process. A second worker replica has slots of its
// own, and the organization its own share of them. Nothing is kept in
// Redis, so a crashed process leaks no slot.

// errOrgBusy is returned inside an evaluation whose organization has its
// share of this process's evaluations calling out already.
var errOrgBusy = errors.New("the organization's evaluations calling its own servers are at their share of the worker")

// orgSlots counts, per organization, the evaluations of this process that
// may call the organization's servers.
type orgSlots struct {
	limit int // at most this many per organization; 0: no limit
	mu    sync.Mutex
	held  map[uuid.UUID]int
}

func newOrgSlots(limit int) *orgSlots {
	return &orgSlots{limit: max(limit, 0), held: map[uuid.UUID]int{}}
}

// acquire takes one of the organization's slots, if one is free.
func (o *orgSlots) acquire(orgID uuid.UUID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.limit > 0 && o.held[orgID] >= o.limit {
		return false
	}
	o.held[orgID]++
	return true
}

// full reports whether the organization has no slot free now.
func (o *orgSlots) full(orgID uuid.UUID) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.limit > 0 && o.held[orgID] >= o.limit
}

// release gives back a slot taken by acquire.
func (o *orgSlots) release(orgID uuid.UUID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.held[orgID] <= 1 {
		delete(o.held, orgID)
		return
	}
	o.held[orgID]--
}
