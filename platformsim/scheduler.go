package platformsim

import (
	"container/heap"
	"sync"
	"time"
)

type eventKind uint8

const (
	evStatus   eventKind = iota // the next planned status of msg
	evTemplate                  // the automatic review of tmpl
	evRetry                     // re-queue a failed webhook delivery
)

type event struct {
	at   time.Time
	kind eventKind
	msg  *message
	tmpl *template
	d    *delivery
}

type eventHeap []event

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = event{}
	*h = old[:len(old)-1]
	return e
}

// scheduler is a timer heap served by one goroutine: every future status,
// template review and webhook retry waits here, so pending work costs one
// heap entry, not a goroutine or a runtime timer.
type scheduler struct {
	mu     sync.Mutex
	events eventHeap
	wake   chan struct{}
}

func newScheduler() *scheduler {
	return &scheduler{wake: make(chan struct{}, 1)}
}

func (sc *scheduler) push(e event) {
	sc.mu.Lock()
	heap.Push(&sc.events, e)
	earliest := !sc.events[0].at.Before(e.at)
	sc.mu.Unlock()
	if earliest {
		select {
		case sc.wake <- struct{}{}:
		default:
		}
	}
}

// due pops up to max events due at now and reports when the next one is.
func (sc *scheduler) due(now time.Time, buf []event) ([]event, time.Time) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for len(sc.events) > 0 && !sc.events[0].at.After(now) && len(buf) < cap(buf) {
		buf = append(buf, heap.Pop(&sc.events).(event))
	}
	var next time.Time
	if len(sc.events) > 0 {
		next = sc.events[0].at
	}
	return buf, next
}

func (s *Simulator) runScheduler() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	buf := make([]event, 0, 1024)
	for {
		due, next := s.sched.due(time.Now(), buf[:0])
		for _, e := range due {
			s.fire(e)
		}
		clear(due)
		if len(due) == cap(buf) {
			continue // more may be due already
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = time.Until(next)
		}
		timer.Reset(wait)
		select {
		case <-s.ctx.Done():
			return
		case <-timer.C:
		case <-s.sched.wake:
		}
	}
}

func (s *Simulator) fire(e event) {
	switch e.kind {
	case evStatus:
		s.fireStatus(e.msg)
	case evTemplate:
		s.fireTemplateReview(e.tmpl)
	case evRetry:
		s.queue.pushDelivery(e.d)
	}
}
