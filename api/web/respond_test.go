package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/internal/infra/apperr"
)

// fail runs Fail on a request whose context carries log, and returns the
// recorded answer.
func fail(t *testing.T, log *slog.Logger, err error) *httptest.ResponseRecorder {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest("GET", "/x", nil)
	c.Request = c.Request.WithContext(WithLogger(c.Request.Context(), log))
	c.Set(KeyRequestID, "req-1")
	Fail(c, err)
	return w
}

func TestFailMapsErrorKindsToStatuses(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	for _, tc := range []struct {
		err    error
		status int
		msg    string
	}{
		{apperr.Invalidf("bad"), 400, "bad"},
		{apperr.Unauthorizedf("who"), 401, "who"},
		{apperr.Forbiddenf("no"), 403, "no"},
		{apperr.NotFoundf("gone"), 404, "gone"},
		{apperr.Conflictf("taken"), 409, "taken"},
		{apperr.TooManyf("slow down"), 429, "slow down"},
		{fmt.Errorf("wrapped: %w", apperr.Upstreamf("provider down")), 502, "provider down"},
		{&http.MaxBytesError{Limit: 1}, 413, "request body is too large"},
		{errors.New("secret cause"), 500, "internal server error"},
	} {
		w := fail(t, quiet, tc.err)
		var env Envelope
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatal(err)
		}
		if w.Code != tc.status || env.Status != "error" || env.Message != tc.msg || env.Data != nil {
			t.Errorf("%v: got %d %s, want %d %q", tc.err, w.Code, w.Body, tc.status, tc.msg)
		}
	}
}

// A 500 is logged, with its cause and request id, by the logger the request
// carries; the answer does not show the cause.
func TestFailLogsInternalErrorsToTheRequestLogger(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := fail(t, slog.New(slog.NewTextHandler(&buf, nil)), errors.New("secret cause"))
	if strings.Contains(w.Body.String(), "secret") {
		t.Fatalf("the answer shows the cause: %s", w.Body)
	}
	if log := buf.String(); !strings.Contains(log, "secret cause") || !strings.Contains(log, "request_id=req-1") {
		t.Fatalf("log %q", log)
	}
	buf.Reset()
	fail(t, slog.New(slog.NewTextHandler(&buf, nil)), apperr.NotFoundf("gone"))
	if buf.Len() != 0 {
		t.Fatalf("a 404 was logged: %q", buf.String())
	}
}

func TestFailSetsRetryAfterAndWWWAuthenticate(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	if w := fail(t, quiet, apperr.TooManyAfter(1500*time.Millisecond, "wait")); w.Header().Get("Retry-After") != "2" {
		t.Errorf("Retry-After %q, want 2", w.Header().Get("Retry-After"))
	}
	if w := fail(t, quiet, apperr.Unauthorizedf("who")); w.Header().Get("WWW-Authenticate") != `Bearer realm="wharf"` {
		t.Errorf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
	}
}
