package apptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Received is one request a Receiver got.
type Received struct {
	At     time.Time
	Header http.Header
	Body   []byte
}

// Receiver is an HTTP endpoint for outbound webhooks that records what it
// gets, can answer with failures, and measures how many requests it served
// at once.
type Receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []Received
	statuses []int // answers for the next requests; 200 when exhausted
	Delay    time.Duration
	inFlight atomic.Int64
	MaxSeen  atomic.Int64
}

// NewReceiver starts a receiver until the test ends.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	n := r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	for {
		m := r.MaxSeen.Load()
		if n <= m || r.MaxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, Received{At: time.Now(), Header: req.Header.Clone(), Body: body})
	status := http.StatusOK
	if len(r.statuses) > 0 {
		status, r.statuses = r.statuses[0], r.statuses[1:]
	}
	delay := r.Delay
	r.mu.Unlock()
	time.Sleep(delay)
	w.WriteHeader(status)
}

// FailNext makes the next requests answer with these statuses.
func (r *Receiver) FailNext(statuses ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, statuses...)
}

// Got returns what was received so far.
func (r *Receiver) Got() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.got...)
}
