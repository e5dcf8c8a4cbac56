// Package apptest boots the real system for end-to-end tests: the api built by
// app.NewAPI behind an httptest server, on a fresh PostgreSQL database and a
// flushed Redis database, optionally with a real asynq worker. Requests go
// through the real router and middleware, and every answer the api gives is
// checked against its OpenAPI document (contract.go).
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/app"
	"wharf/internal/infra/config"
	"wharf/internal/testenv"
)

// Bootstrap credentials of every test system.
const (
	AdminEmail    = "admin@wharf.test"
	AdminPassword = "bootstrap-pass-123"
)

// Env is one running test system.
type Env struct {
	T       testing.TB
	Environ map[string]string
	Cfg     config.API
	API     *app.API
	Server  *httptest.Server
	DB      *gorm.DB
	Redis   *redis.Client
}

// New starts a system; overrides replace environment variables of the
// default test configuration.
func New(t testing.TB, overrides map[string]string) *Env {
	t.Helper()
	environ := map[string]string{
		"DATABASE_URL":             testenv.DatabaseURL(t),
		"REDIS_URL":                testenv.RedisURL(t),
		"JWT_SECRET":               testenv.RandomKey(),
		"ENCRYPTION_KEY":           testenv.RandomKey(),
		"BOOTSTRAP_ADMIN_EMAIL":    AdminEmail,
		"BOOTSTRAP_ADMIN_PASSWORD": AdminPassword,
		"BOOTSTRAP_ORG_NAME":       "Bootstrap Org",
		"STORAGE_DIR":              t.TempDir(),
		"LOG_LEVEL":                "warn",
		// Tests make many requests from one address; the rate limit tests
		// lower these again.
		"RATE_LIMIT_PER_MINUTE":      "100000",
		"RATE_LIMIT_BULK_PER_MINUTE": "100000",
	}
	maps.Copy(environ, overrides)
	e := &Env{T: t, Environ: environ}
	e.Cfg = mustConfig(t, environ)
	e.API = startAPI(t, e.Cfg)
	e.Server = httptest.NewServer(checked(t, e.API))
	t.Cleanup(e.Server.Close)
	e.DB, e.Redis = e.API.DB, e.API.Redis
	return e
}

func mustConfig(t testing.TB, environ map[string]string) config.API {
	cfg, err := config.LoadAPIFrom(environ)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

func startAPI(t testing.TB, cfg config.API) *app.API {
	a, err := app.NewAPI(context.Background(), cfg, testenv.Quiet())
	if err != nil {
		t.Fatalf("start api: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

// Replica starts a second api process on the same database and Redis, as a
// second replica behind a load balancer would be.
func (e *Env) Replica() *httptest.Server {
	a := startAPI(e.T, e.Cfg)
	srv := httptest.NewServer(checked(e.T, a))
	e.T.Cleanup(srv.Close)
	return srv
}

// StartWorker runs a real worker process on the system's Redis until the
// test ends.
func (e *Env) StartWorker() *app.Worker {
	e.T.Helper()
	wcfg, err := config.LoadWorkerFrom(e.Environ)
	if err != nil {
		e.T.Fatalf("worker config: %v", err)
	}
	w, err := app.NewWorker(context.Background(), wcfg, testenv.Quiet())
	if err != nil {
		e.T.Fatalf("start worker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	e.T.Cleanup(func() {
		cancel()
		<-done
		w.Close()
	})
	return w
}

// Auth adds credentials to a request.
type Auth func(*http.Request)

// Bearer authenticates with an access token.
func Bearer(token string) Auth {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

// APIKey authenticates with an API key.
func APIKey(key string) Auth {
	return func(r *http.Request) { r.Header.Set("X-API-Key", key) }
}

// Resp is a decoded answer.
type Resp struct {
	Status  int
	Header  http.Header
	Body    []byte
	Message string
	Data    json.RawMessage
	Outcome string // envelope status: success or error
}

// Into decodes the envelope's data into v.
func (r *Resp) Into(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode data %s: %v", r.Data, err)
	}
}

// Do sends a JSON request to the api; body may be nil, a string (sent raw) or
// any value (JSON-encoded).
func (e *Env) Do(method, path string, body any, auth Auth) *Resp {
	e.T.Helper()
	return e.DoAt(e.Server.URL, method, path, body, auth)
}

// DoAt is Do against another base URL (a replica).
func (e *Env) DoAt(base, method, path string, body any, auth Auth) *Resp {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != nil {
		auth(req)
	}
	return e.send(req)
}

// Upload sends a multipart form with one file.
func (e *Env) Upload(path string, fields map[string]string, fileField, fileName string, data []byte, auth Auth) *Resp {
	e.T.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if fileField != "" {
		fw, _ := mw.CreateFormFile(fileField, fileName)
		_, _ = fw.Write(data)
	}
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Server.URL+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if auth != nil {
		auth(req)
	}
	return e.send(req)
}

func (e *Env) send(req *http.Request) *Resp {
	e.T.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := &Resp{Status: res.StatusCode, Header: res.Header, Body: b}
	var env struct {
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(b, &env) == nil {
		r.Outcome, r.Message, r.Data = env.Status, env.Message, env.Data
	}
	return r
}

// Expect fails the test unless the answer has the status.
func (r *Resp) Expect(t testing.TB, status int) *Resp {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

// Session is a logged-in user.
type Session struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
	User         struct {
		ID             string `json:"id"`
		OrganizationID string `json:"organization_id"`
	} `json:"user"`
}

// Auth returns the session's bearer credentials.
func (s Session) Auth() Auth { return Bearer(s.AccessToken) }

// Login logs in and fails the test on error.
func (e *Env) Login(email, password string) Session {
	e.T.Helper()
	var s Session
	e.Do("POST", "/api/auth/login", map[string]string{"email": email, "password": password}, nil).Expect(e.T, 200).Into(e.T, &s)
	return s
}

// Admin logs in as the bootstrap super admin.
func (e *Env) Admin() Session { return e.Login(AdminEmail, AdminPassword) }

// RoleID returns the id of the named role in the caller's organization.
func (e *Env) RoleID(auth Auth, name string) string {
	e.T.Helper()
	var out struct {
		Roles []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"roles"`
	}
	e.Do("GET", "/api/roles", nil, auth).Expect(e.T, 200).Into(e.T, &out)
	for _, r := range out.Roles {
		if r.Name == name {
			return r.ID
		}
	}
	e.T.Fatalf("no role %q", name)
	return ""
}

// CreateUser creates a user with the named role in the caller's organization
// and returns a session for them.
func (e *Env) CreateUser(admin Auth, email, roleName string) Session {
	e.T.Helper()
	body := map[string]any{"email": email, "password": "password-123", "full_name": "User " + email}
	if roleName != "" {
		body["role_id"] = e.RoleID(admin, roleName)
	}
	e.Do("POST", "/api/users", body, admin).Expect(e.T, 201)
	return e.Login(email, "password-123")
}

// Inspector returns an asynq inspector on the system's Redis.
func (e *Env) Inspector() *asynq.Inspector {
	opts := e.Redis.Options()
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB, Password: opts.Password})
	e.T.Cleanup(func() { _ = insp.Close() })
	return insp
}
