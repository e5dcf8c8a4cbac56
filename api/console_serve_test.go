package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"wharf/api/console"
	"wharf/internal/apptest"
)

// The api serves the web console (api/console) through its real router: /
// and /console lead to /console/, every console path answers the page (or,
// in a binary built without the console, the page that says how to build
// it) under the console's Content-Security-Policy, and nothing of it is
// rate limited or needs credentials.
func TestTheRouterServesTheConsole(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, map[string]string{"RATE_LIMIT_PER_MINUTE": "1"})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/", "/console"} {
		res, err := noFollow.Get(e.Server.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/console/" {
			t.Fatalf("GET %s: %d to %q", p, res.StatusCode, res.Header.Get("Location"))
		}
	}
	status, marker := http.StatusOK, `<div id="app">`
	if !console.New().Built() {
		status, marker = http.StatusServiceUnavailable, "make build"
	}
	for range 3 { // more than the rate limit allows: the console is not counted
		for _, p := range []string{"/console/", "/console/campaigns/42?status=sending"} {
			res, err := http.Get(e.Server.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != status || !strings.Contains(string(body), marker) {
				t.Fatalf("GET %s: %d %.200s", p, res.StatusCode, body)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-eval") {
				t.Fatalf("GET %s: CSP %q", p, csp)
			}
		}
	}
	// The API's own unknown paths are still the API's 404.
	if r := e.Do("GET", "/api/no-such-route", nil, nil); r.Status != http.StatusNotFound || r.Message != "route not found" {
		t.Fatalf("an unknown API path: %d %s", r.Status, r.Body)
	}
}
