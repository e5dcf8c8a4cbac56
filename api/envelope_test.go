package api_test

import (
	"context"
	"database/sql"
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

// Each of /readyz's checks has its own deadline and they run at once: a
// database whose pool has no free connection (every one held) is reported
// alone, not with a Redis that was never asked because the database spent
// the shared deadline; a closed Redis is reported alone too.
func TestReadinessNamesExactlyTheFailedChecks(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	sqlDB, err := e.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	var held []*sql.Conn
	for range sqlDB.Stats().MaxOpenConnections {
		conn, err := sqlDB.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, conn)
	}
	r := e.Do("GET", "/readyz", nil, nil).Expect(t, 503)
	if r.Message != "not ready: database unreachable" {
		t.Fatalf("with every database connection taken: %q, want the database alone", r.Message)
	}
	for _, conn := range held {
		_ = conn.Close()
	}
	e.Do("GET", "/readyz", nil, nil).Expect(t, 200)

	_ = e.Redis.Close()
	if r := e.Do("GET", "/readyz", nil, nil).Expect(t, 503); r.Message != "not ready: redis unreachable" {
		t.Fatalf("with Redis closed: %q, want redis alone", r.Message)
	}
}
