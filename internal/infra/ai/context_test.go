package ai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"wharf/internal/infra/ai"
	"wharf/internal/infra/safehttp"
)

// contextServer answers body (settable) and counts its requests.
type contextServer struct {
	*httptest.Server
	hits   atomic.Int64
	mu     sync.Mutex
	body   string
	status int
	delay  time.Duration
}

func newContextServer(t *testing.T, body string) *contextServer {
	cs := &contextServer{body: body, status: http.StatusOK}
	done := make(chan struct{})
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.hits.Add(1)
		cs.mu.Lock()
		body, status, delay := cs.body, cs.status, cs.delay
		cs.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		case <-done:
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(func() { close(done); cs.Close() })
	return cs
}

func (cs *contextServer) set(body string, status int, delay time.Duration) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.body, cs.status, cs.delay = body, status, delay
}

func TestFetchContextCapsTheSize(t *testing.T) {
	t.Parallel()
	s := ai.New(private, 5*time.Second)
	big := newContextServer(t, strings.Repeat("a", 3*ai.ContextMaxBytes))
	got, err := s.FetchContext(context.Background(), big.URL)
	if err != nil || len(got) != ai.ContextMaxBytes || strings.Trim(got, "a") != "" {
		t.Fatalf("FetchContext: %d bytes, %v: want the first %d", len(got), err, ai.ContextMaxBytes)
	}
	// The cut falls inside a two-byte character: it is dropped whole.
	split := newContextServer(t, "x"+strings.Repeat("é", ai.ContextMaxBytes))
	got, err = s.FetchContext(context.Background(), split.URL)
	if err != nil || !utf8.ValidString(got) || len(got) != ai.ContextMaxBytes-1 || strings.Contains(got, "\uFFFD") {
		t.Fatalf("FetchContext: %d bytes, valid %v, %v", len(got), utf8.ValidString(got), err)
	}
	small := newContextServer(t, `{"price": "12 EUR"}`)
	if got, err := s.FetchContext(context.Background(), small.URL); err != nil || got != `{"price": "12 EUR"}` {
		t.Fatalf("FetchContext = %q, %v", got, err)
	}
}

func TestFetchContextTimesOut(t *testing.T) {
	t.Parallel()
	cs := newContextServer(t, "late")
	cs.set("late", http.StatusOK, time.Minute)
	s := ai.New(private, 300*time.Millisecond)
	start := time.Now()
	if _, err := s.FetchContext(context.Background(), cs.URL); !errors.Is(err, ai.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	// Well before the server's minute (not "about 300 ms": a busy machine
	// is slow at everything).
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("gave up after %s", d)
	}
	// The caller's deadline counts too.
	s = ai.New(private, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.FetchContext(ctx, cs.URL); !errors.Is(err, ai.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestFetchContextRefusesPrivateAddressesUnlessAllowed(t *testing.T) {
	t.Parallel()
	cs := newContextServer(t, "internal secrets")
	strict := ai.New(safehttp.Policy{}, 5*time.Second)
	for _, u := range []string{cs.URL, strings.Replace(cs.URL, "127.0.0.1", "localhost", 1)} {
		_, err := strict.FetchContext(context.Background(), u)
		if !errors.Is(err, safehttp.ErrBlocked) || safehttp.Public(err) != safehttp.NotAllowed {
			t.Fatalf("%s: err = %v, want ErrBlocked", u, err)
		}
	}
	if n := cs.hits.Load(); n != 0 {
		t.Fatalf("the refused server got %d requests", n)
	}
	// Allowed by the policy (OUTBOUND_ALLOW_PRIVATE), except link-local
	// (cloud metadata), refused before any connection.
	allowing := ai.New(private, 5*time.Second)
	if got, err := allowing.FetchContext(context.Background(), cs.URL); err != nil || got != "internal secrets" {
		t.Fatalf("allowed: %q, %v", got, err)
	}
	if _, err := allowing.FetchContext(context.Background(), "http://169.254.169.254/latest/meta-data"); !errors.Is(err, safehttp.ErrBlocked) {
		t.Fatalf("link-local: err = %v, want ErrBlocked", err)
	}
	for _, u := range []string{"", "ftp://example.com/x", "/relative"} {
		if _, err := allowing.FetchContext(context.Background(), u); err == nil {
			t.Fatalf("%q: no error", u)
		}
	}
}

func TestFetchContextCachesBriefly(t *testing.T) {
	t.Parallel()
	cs := newContextServer(t, "v1")
	s := ai.New(private, 5*time.Second)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	s.SetClock(func() time.Time { return time.Unix(0, now.Load()) })
	for range 3 {
		if got, err := s.FetchContext(context.Background(), cs.URL); err != nil || got != "v1" {
			t.Fatalf("FetchContext = %q, %v", got, err)
		}
	}
	if n := cs.hits.Load(); n != 1 {
		t.Fatalf("%d fetches within the TTL, want 1", n)
	}
	cs.set("v2", http.StatusOK, 0)
	now.Add(int64(ai.ContextTTL - time.Second))
	if got, _ := s.FetchContext(context.Background(), cs.URL); got != "v1" {
		t.Fatalf("within the TTL: %q, want the cached v1", got)
	}
	now.Add(int64(2 * time.Second))
	if got, err := s.FetchContext(context.Background(), cs.URL); err != nil || got != "v2" || cs.hits.Load() != 2 {
		t.Fatalf("after the TTL: %q, %v, %d fetches: want v2 fetched again", got, err, cs.hits.Load())
	}
}

// A failed fetch is remembered for ContextFailureTTL: the next messages get
// the error without asking the server again, and after the TTL it is asked
// again.
func TestFetchContextRemembersFailuresBriefly(t *testing.T) {
	t.Parallel()
	s := ai.New(private, 5*time.Second)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	s.SetClock(func() time.Time { return time.Unix(0, now.Load()) })
	down := newContextServer(t, "down")
	down.set("down", http.StatusBadGateway, 0)
	for range 3 {
		if _, err := s.FetchContext(context.Background(), down.URL); err == nil || !strings.Contains(err.Error(), "502") {
			t.Fatalf("err = %v, want the status", err)
		}
	}
	if n := down.hits.Load(); n != 1 {
		t.Fatalf("%d fetches of a failing URL within the failure TTL, want 1", n)
	}
	down.set("back", http.StatusOK, 0)
	now.Add(int64(ai.ContextFailureTTL - time.Second))
	if _, err := s.FetchContext(context.Background(), down.URL); err == nil || down.hits.Load() != 1 {
		t.Fatalf("within the failure TTL: %v, %d fetches: want the remembered failure", err, down.hits.Load())
	}
	now.Add(int64(2 * time.Second))
	if got, err := s.FetchContext(context.Background(), down.URL); err != nil || got != "back" || down.hits.Load() != 2 {
		t.Fatalf("after the failure TTL: %q, %v, %d fetches: want it fetched again", got, err, down.hits.Load())
	}

	// A server that hangs is remembered too: its timeout is paid once.
	slow := ai.New(private, 200*time.Millisecond)
	hung := newContextServer(t, "late")
	hung.set("late", http.StatusOK, time.Minute)
	for range 3 {
		if _, err := slow.FetchContext(context.Background(), hung.URL); !errors.Is(err, ai.ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout", err)
		}
	}
	if n := hung.hits.Load(); n != 1 {
		t.Fatalf("%d fetches of a hanging URL, want 1", n)
	}
}

// FetchContexts asks every context server at once: two contexts that each
// answer only once both requests have arrived are both fetched, which
// fetches one after the other could not do within the budget.
func TestFetchContextsAskAtOnce(t *testing.T) {
	t.Parallel()
	var inFlight, most atomic.Int64
	both := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n == 2 {
			once.Do(func() { close(both) })
		}
		select {
		case <-both:
			_, _ = w.Write([]byte("text of " + r.URL.Path))
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	s := ai.New(private, 20*time.Second)
	got := s.FetchContexts(context.Background(), []string{srv.URL + "/a", srv.URL + "/b"})
	if got[0].Err != nil || got[0].Text != "text of /a" || got[1].Err != nil || got[1].Text != "text of /b" {
		t.Fatalf("results %+v", got)
	}
	if most.Load() != 2 {
		t.Fatalf("at most %d requests in flight at once, want 2", most.Load())
	}

	// Contexts that hang all end with the one budget, as timeouts.
	hung := newContextServer(t, "late")
	hung.set("late", http.StatusOK, time.Minute)
	short := ai.New(private, 300*time.Millisecond)
	for i, r := range short.FetchContexts(context.Background(), []string{hung.URL + "/1", hung.URL + "/2", hung.URL + "/3"}) {
		if !errors.Is(r.Err, ai.ErrTimeout) {
			t.Fatalf("context %d: %v, want ErrTimeout", i, r.Err)
		}
	}
}

// Concurrent calls for one URL share one fetch.
func TestConcurrentFetchesOfOneURLShareOneRequest(t *testing.T) {
	t.Parallel()
	cs := newContextServer(t, "shared")
	cs.set("shared", http.StatusOK, 200*time.Millisecond)
	s := ai.New(private, 5*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			if got, err := s.FetchContext(context.Background(), cs.URL); err != nil || got != "shared" {
				errs <- errors.New("got " + got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := cs.hits.Load(); n != 1 {
		t.Fatalf("%d fetches for 10 concurrent calls, want 1", n)
	}
}
