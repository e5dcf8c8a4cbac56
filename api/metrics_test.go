package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/internal/infra/metrics/metricstest"
)

// /metrics is not public: the api's own listener answers it 404, even to a
// super admin, and it is served only on METRICS_ADDR (off by default).
func TestMetricsAreNotOnThePublicListener(t *testing.T) {
	e := apptest.New(t, map[string]string{"METRICS_ADDR": "127.0.0.1:0"})
	admin := e.Admin()
	for _, auth := range []apptest.Auth{nil, admin.Auth()} {
		r := e.Do("GET", "/metrics", nil, auth)
		if r.Status != http.StatusNotFound || strings.Contains(string(r.Body), "wharf_http_requests_total") {
			t.Fatalf("GET /metrics on the api listener: %d %s", r.Status, r.Body)
		}
	}
	if e.API.MetricsAddr == "" {
		t.Fatal("METRICS_ADDR set but no metrics listener")
	}
	metricstest.Scrape(t, "http://"+e.API.MetricsAddr+"/metrics") // fails unless it answers 200

	off := apptest.New(t, nil)
	if off.API.MetricsAddr != "" {
		t.Fatalf("metrics listener %s without METRICS_ADDR", off.API.MetricsAddr)
	}
}

// Requests are counted by route template, never by raw path (ids would
// make a series per contact), with method and status; requests that match
// no route share the route "unmatched", and unknown methods are OTHER.
func TestHTTPMetricsByRouteTemplate(t *testing.T) {
	e := apptest.New(t, map[string]string{"METRICS_ADDR": "127.0.0.1:0"})
	admin := e.Admin()
	id := uuid.NewString()
	for range 3 {
		e.Do("GET", "/api/contacts/"+id, nil, admin.Auth()).Expect(t, 404)
	}
	e.Do("GET", "/api/contacts/"+uuid.NewString(), nil, nil).Expect(t, 401)
	e.Do("GET", "/api/me", nil, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/no-such-thing/"+id, nil, nil).Expect(t, 404)
	e.Do("BREW", "/api/me", nil, nil)

	f := metricstest.Scrape(t, "http://"+e.API.MetricsAddr+"/metrics")
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"route": "/api/contacts/:id", "method": "GET", "code": "404"}, 3},
		{map[string]string{"route": "/api/contacts/:id", "method": "GET", "code": "401"}, 1},
		{map[string]string{"route": "/api/me", "method": "GET", "code": "200"}, 1},
		{map[string]string{"route": "/api/auth/login", "method": "POST", "code": "200"}, 1},
		{map[string]string{"route": "unmatched", "method": "GET", "code": "404"}, 1},
		{map[string]string{"route": "unmatched", "method": "OTHER"}, 1},
	} {
		if got := f.Value("wharf_http_requests_total", c.labels); got != c.want {
			t.Errorf("wharf_http_requests_total%v = %v, want %v", c.labels, got, c.want)
		}
	}
	if got := f.Value("wharf_http_request_duration_seconds", map[string]string{"route": "/api/contacts/:id", "method": "GET"}); got != 4 {
		t.Errorf("duration histogram of /api/contacts/:id counts %v requests, want 4", got)
	}
	for _, route := range f.LabelValues("wharf_http_requests_total", "route") {
		if strings.Contains(route, id) || strings.Contains(route, "no-such-thing") {
			t.Errorf("a raw path became a route label: %q", route)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if !f.Has(name) {
			t.Errorf("no %s on the api's /metrics", name)
		}
	}
}
