package api_test

import (
	"strings"
	"testing"

	"wharf/internal/apptest"
)

func TestErrorEnvelopeAndConventions(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	check := func(r *apptest.Resp, status int, msg string) {
		t.Helper()
		if r.Status != status || r.Outcome != "error" || string(r.Data) != "null" || !strings.Contains(r.Message, msg) {
			t.Fatalf("want %d %q in the error envelope, got %d %s", status, msg, r.Status, r.Body)
		}
	}
	check(e.Do("GET", "/api/does-not-exist", nil, admin.Auth()), 404, "route not found")
	check(e.Do("PATCH", "/api/me", nil, admin.Auth()), 405, "method not allowed")
	check(e.Do("POST", "/api/roles", "{not json", admin.Auth()), 400, "not valid JSON")
	check(e.Do("POST", "/api/roles", "", admin.Auth()), 400, "must be a JSON object")
	check(e.Do("POST", "/api/roles", map[string]any{"name": 5, "permissions": []string{}}, admin.Auth()), 400, "name must be of type string")
	check(e.Do("POST", "/api/roles", `{"name":"x","permissions":[],"description":"`+strings.Repeat("a", 2<<20)+`"}`, admin.Auth()), 413, "too large")
	check(e.Do("GET", "/api/roles/123", nil, admin.Auth()), 400, "must be a UUID")

	r := e.Do("GET", "/api/me", nil, admin.Auth()).Expect(t, 200)
	if r.Outcome != "success" || r.Header.Get("X-Request-Id") == "" {
		t.Fatalf("success envelope: %s %v", r.Body, r.Header)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	e := apptest.New(t, nil)
	e.Do("GET", "/healthz", nil, nil).Expect(t, 200)
	r := e.Do("GET", "/readyz", nil, nil).Expect(t, 200)
	if !strings.Contains(string(r.Body), `"database":"ok"`) || !strings.Contains(string(r.Body), `"redis":"ok"`) {
		t.Fatalf("readyz %s", r.Body)
	}
	sqlDB, _ := e.DB.DB()
	_ = sqlDB.Close()
	r = e.Do("GET", "/readyz", nil, nil).Expect(t, 503)
	if !strings.Contains(r.Message, "database") {
		t.Fatalf("readyz down: %s", r.Body)
	}
	e.Do("GET", "/healthz", nil, nil).Expect(t, 200)
}
