package apptest

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"time"
)

// SSE is one server-sent event.
type SSE struct {
	ID    string
	Event string
	Data  string
}

// EventStream is an open server-sent events answer being read.
type EventStream struct {
	Status int
	Header http.Header
	// Body is the answer's body when it is not a stream (a refusal).
	Body     []byte
	events   chan SSE
	comments chan string
	cancel   context.CancelFunc
}

// OpenStream sends GET base+path and, when the answer is a stream, reads
// its events in the background until Close. header adds request headers
// (Last-Event-ID).
func (e *Env) OpenStream(base, path string, auth Auth, header map[string]string) *EventStream {
	e.T.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		cancel()
		e.T.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if auth != nil {
		auth(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		e.T.Fatalf("GET %s: %v", path, err)
	}
	s := &EventStream{Status: res.StatusCode, Header: res.Header, events: make(chan SSE, 1024), comments: make(chan string, 1024), cancel: cancel}
	e.T.Cleanup(s.Close)
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		defer res.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		s.Body = []byte(b.String())
		close(s.events)
		return s
	}
	go func() {
		defer res.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var cur SSE
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.Data != "" {
					s.events <- cur
				}
				cur = SSE{}
			case strings.HasPrefix(line, ":"):
				select {
				case s.comments <- strings.TrimSpace(line[1:]):
				default:
				}
			default:
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "id":
					cur.ID = v
				case "event":
					cur.Event = v
				case "data":
					cur.Data += v
				}
			}
		}
	}()
	return s
}

// Next answers the next event, or false when none came within d (scaled
// like Await's waits on a busy machine) or the stream ended.
func (s *EventStream) Next(d time.Duration) (SSE, bool) {
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(d):
		return SSE{}, false
	}
}

// Comment answers the next comment line (a heartbeat), or false.
func (s *EventStream) Comment(d time.Duration) (string, bool) {
	select {
	case c := <-s.comments:
		return c, true
	case <-time.After(d):
		return "", false
	}
}

// Close ends the request.
func (s *EventStream) Close() { s.cancel() }
