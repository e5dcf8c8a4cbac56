package platformsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// requestRecord is the compact stored form of a provider API request.
type requestRecord struct {
	id        int64
	at        time.Time
	method    string
	path      string
	query     string
	body      []byte
	bodyJSON  bool
	status    int // 0 while the request is being answered
	errorCode int
}

// Request is a provider API request as the control API reports it. Body is
// the request's JSON when it parses, a JSON string otherwise (multipart
// uploads are summarised, not stored).
type Request struct {
	ID        int64           `json:"id"`
	At        time.Time       `json:"at"`
	Method    string          `json:"method"`
	Path      string          `json:"path"`
	Query     string          `json:"query"`
	Body      json.RawMessage `json:"body"`
	Status    int             `json:"status"`
	ErrorCode int             `json:"error_code"`
}

// RequestFilter selects requests: Method exactly (any case), Path as a
// substring, and only ids above Since. Zero values match everything.
type RequestFilter struct {
	Method string
	Path   string
	Since  int64
}

func (f RequestFilter) match(r *requestRecord) bool {
	return r.id > f.Since &&
		(f.Method == "" || strings.EqualFold(f.Method, r.method)) &&
		(f.Path == "" || strings.Contains(r.path, f.Path))
}

// statusWriter remembers the answer's status and provider error code for
// the request log.
type statusWriter struct {
	http.ResponseWriter
	status    int
	errorCode int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the server's writer (to flush).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// serveProvider records the request, applies the injected latency and runs
// the provider routes.
func (s *Simulator) serveProvider(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		writeError(w, errInvalid("could not read the request body: %v", err))
		return
	}
	if len(body) > maxRequestBody {
		writeError(w, errInvalid("request body larger than %d bytes", maxRequestBody))
		return
	}
	r.Body = &bufferedBody{Reader: bytes.NewReader(body), data: body}
	rec := s.logRequest(r, body)
	sw := &statusWriter{ResponseWriter: w}
	if d := s.config().Latency; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	if aerr := s.takeFault(r); aerr != nil {
		writeError(sw, aerr)
	} else {
		s.provider.ServeHTTP(sw, r)
	}
	s.reqMu.Lock()
	rec.status = sw.status
	rec.errorCode = sw.errorCode
	s.reqMu.Unlock()
}

// bufferedBody is the request body once serveProvider has read it. Handlers
// take the bytes from it with requestBody, so that the request log and a
// recorded message share one copy.
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func (b *bufferedBody) Close() error { return nil }

// requestBody returns the request's body bytes; they must not be modified.
func requestBody(r *http.Request) []byte {
	if b, ok := r.Body.(*bufferedBody); ok {
		return b.data
	}
	data, _ := io.ReadAll(r.Body)
	return data
}

func (s *Simulator) logRequest(r *http.Request, body []byte) *requestRecord {
	rec := &requestRecord{at: time.Now(), method: r.Method, path: r.URL.Path, query: r.URL.RawQuery}
	switch ct := r.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "multipart/"):
		b, _ := json.Marshal(fmt.Sprintf("<multipart/form-data, %d bytes>", len(body)))
		rec.body, rec.bodyJSON = b, true
	case len(body) == 0:
	case json.Valid(body):
		rec.body, rec.bodyJSON = body, true
	default:
		rec.body = body
	}
	s.reqMu.Lock()
	s.nextReqID++
	rec.id = s.nextReqID
	s.requests = append(s.requests, rec)
	s.reqMu.Unlock()
	return rec
}

func (r *requestRecord) view() Request {
	out := Request{ID: r.id, At: r.at, Method: r.method, Path: r.path, Query: r.query, Status: r.status, ErrorCode: r.errorCode}
	switch {
	case r.bodyJSON:
		out.Body = json.RawMessage(r.body)
	case len(r.body) > 0:
		out.Body, _ = json.Marshal(string(r.body))
	default:
		out.Body = json.RawMessage("null")
	}
	return out
}

// fromSince returns the index of the first record with an id above since;
// ids grow with the slice.
func (s *Simulator) fromSinceLocked(since int64) int {
	return sort.Search(len(s.requests), func(i int) bool { return s.requests[i].id > since })
}

// Requests returns the provider API requests received, in arrival order.
func (s *Simulator) Requests(f RequestFilter) []Request {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	out := []Request{}
	for _, r := range s.requests[s.fromSinceLocked(f.Since):] {
		if f.match(r) {
			out = append(out, r.view())
		}
	}
	return out
}

// CountRequests counts the requests Requests would return, without copying
// them.
func (s *Simulator) CountRequests(f RequestFilter) int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	from := s.fromSinceLocked(f.Since)
	if f.Method == "" && f.Path == "" {
		return len(s.requests) - from
	}
	n := 0
	for _, r := range s.requests[from:] {
		if f.match(r) {
			n++
		}
	}
	return n
}

// ClearRequests empties the request log.
func (s *Simulator) ClearRequests() {
	s.reqMu.Lock()
	s.requests = nil
	s.reqMu.Unlock()
}
