package apptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"wharf/app"
)

// checked serves the api with every answer checked against its OpenAPI
// document (what GET /api/openapi.json serves), so that every end-to-end
// test also tests the document: an answer whose status, media type or body
// the document does not describe fails the test, whether the test sent the
// request with Env.Do, Env.Upload or a plain HTTP client.
func checked(t testing.TB, a *app.API) http.Handler {
	t.Helper()
	c, err := sharedContract()
	if err != nil {
		t.Fatalf("apptest: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		a.Handler.ServeHTTP(rec, r)
		if rec.status == statusClientClosed {
			return // written to the logs only: the client has gone
		}
		if err := c.check(r, rec.status, w.Header(), rec.body.Bytes()); err != nil {
			t.Errorf("apptest: %s %s answered %d, which the OpenAPI document does not describe: %v\nbody: %s",
				r.Method, r.URL.RequestURI(), rec.status, err, clip(rec.body.Bytes(), 2000))
		}
	})
}

// statusClientClosed is web.Fail's status for a request its client
// abandoned, which no client receives.
const statusClientClosed = 499

// contract finds the operation of a request in the document and validates
// the answer with kin-openapi's openapi3filter.
type contract struct {
	router routers.Router
}

// sharedContract is loaded once per test binary: every api of the process
// serves the same document (api generates it once), and loading it takes
// about 0.3 s under the race detector. kin-openapi's router and validation
// are safe for concurrent use.
var sharedContract = sync.OnceValues(func() (*contract, error) { return newContract(app.APIDescription().OpenAPI()) })

func newContract(document []byte) (*contract, error) {
	doc, err := openapi3.NewLoader().LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route the OpenAPI document: %w", err)
	}
	return &contract{router: router}, nil
}

// check validates one answer. Requests outside the document (/healthz,
// /monitoring, unknown paths and methods, which the router answers itself)
// are not checked; that every route of the table is in the document is
// api/openapi's test.
func (c *contract) check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := c.router.FindRoute(req)
	if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("find the route: %w", err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true, // a status the document does not list is a mismatch
			MultiError:            true,
		},
	}
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// recorder keeps a copy of the answer it passes on. It flushes (server-sent
// events) and unwraps (http.ResponseController's write deadline) like the
// writer it wraps.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// CloseNotify passes on the wrapped writer's: gin's Context.Stream still
// asserts the deprecated http.CloseNotifier.
func (r *recorder) CloseNotify() <-chan bool {
	return r.ResponseWriter.(http.CloseNotifier).CloseNotify() //nolint:staticcheck // gin needs it
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return append(b[:n:n], "..."...)
	}
	return b
}
