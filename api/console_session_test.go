package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
)

// The web console's session: the refresh token in an HttpOnly cookie that
// only the service's own pages may set or use (docs/API.md, "The console's
// session cookie").

const crossSite = "cross-site request refused: the console's session cookie is accepted only from this service's own pages (Origin header)"

// page sends a request as a page of origin would: with its Origin header
// (none when origin is "") and, when cookie is not "", the session cookie.
func page(origin, cookie string, more ...apptest.Auth) apptest.Auth {
	return func(r *http.Request) {
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if cookie != "" {
			r.AddCookie(&http.Cookie{Name: "wharf_refresh", Value: cookie})
		}
		for _, a := range more {
			a(r)
		}
	}
}

// sessionCookie is the wharf_refresh cookie an answer sets, nil when none.
func sessionCookie(r *apptest.Resp) *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "wharf_refresh" {
			return c
		}
	}
	return nil
}

// hasKey reports whether the envelope's data has the key.
func hasKey(t *testing.T, r *apptest.Resp, key string) bool {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Data, &m); err != nil {
		t.Fatalf("data %s: %v", r.Data, err)
	}
	_, ok := m[key]
	return ok
}

// consoleLogin signs the admin in as the console does and returns the
// cookie's token.
func consoleLogin(t *testing.T, e *apptest.Env) string {
	t.Helper()
	r := e.Do("POST", "/api/auth/login", map[string]any{"email": apptest.AdminEmail, "password": apptest.AdminPassword, "cookie": true},
		page(e.Server.URL, "")).Expect(t, 200)
	c := sessionCookie(r)
	if c == nil || !strings.HasPrefix(c.Value, "wrt_") {
		t.Fatalf("console sign-in set no session cookie: %v", r.Header.Values("Set-Cookie"))
	}
	return c.Value
}

func countRefreshTokens(t *testing.T, e *apptest.Env, where string) int64 {
	t.Helper()
	var n int64
	if err := e.DB.Model(&models.RefreshToken{}).Where(where).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func TestConsoleSignInKeepsTheRefreshTokenInAnHttpOnlyCookie(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	r := e.Do("POST", "/api/auth/login", map[string]any{"email": apptest.AdminEmail, "password": apptest.AdminPassword, "cookie": true},
		page(e.Server.URL, "")).Expect(t, 200)
	if hasKey(t, r, "refresh_token") {
		t.Fatalf("the console's sign-in answer carries the refresh token: %s", r.Data)
	}
	var s apptest.Session
	r.Into(t, &s)
	e.Do("GET", "/api/me", nil, s.Auth()).Expect(t, 200)
	c := sessionCookie(r)
	if c == nil {
		t.Fatalf("no session cookie: %v", r.Header.Values("Set-Cookie"))
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/api/auth" || c.Secure {
		t.Fatalf("cookie flags: %q", r.Header.Get("Set-Cookie"))
	}
	if c.MaxAge < int((7*24*time.Hour-time.Minute).Seconds()) || c.MaxAge > int((7*24*time.Hour).Seconds()) {
		t.Fatalf("cookie lives %d s, want the refresh token's 7 days", c.MaxAge)
	}

	// The cookie refreshes (rotating itself) from the console's own pages.
	r = e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, c.Value)).Expect(t, 200)
	if hasKey(t, r, "refresh_token") {
		t.Fatalf("the cookie refresh answer carries the refresh token: %s", r.Data)
	}
	next := sessionCookie(r)
	if next == nil || next.Value == c.Value || !next.HttpOnly || next.SameSite != http.SameSiteStrictMode || next.Path != "/api/auth" {
		t.Fatalf("refresh did not rotate the cookie: %v", r.Header.Values("Set-Cookie"))
	}
	var tokens apptest.Session
	r.Into(t, &tokens)
	e.Do("GET", "/api/me", nil, tokens.Auth()).Expect(t, 200)
}

func TestAPIClientsKeepTheirTokensInTheBody(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	r := e.Do("POST", "/api/auth/login", map[string]string{"email": apptest.AdminEmail, "password": apptest.AdminPassword}, nil).Expect(t, 200)
	var s apptest.Session
	r.Into(t, &s)
	if s.RefreshToken == "" || sessionCookie(r) != nil {
		t.Fatalf("a body sign-in: refresh token %q, cookie %v", s.RefreshToken, r.Header.Values("Set-Cookie"))
	}
	// A body token needs no Origin, whatever page the client claims, and
	// a cookie sent beside it is not used.
	other := consoleLogin(t, e)
	r = e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": s.RefreshToken}, page("https://elsewhere.example", other)).Expect(t, 200)
	var next apptest.Session
	r.Into(t, &next)
	if next.RefreshToken == "" || next.RefreshToken == s.RefreshToken || sessionCookie(r) != nil {
		t.Fatalf("a body refresh: %s, cookie %v", r.Body, r.Header.Values("Set-Cookie"))
	}
	e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, other)).Expect(t, 200) // the cookie's session was untouched
	e.Do("POST", "/api/auth/logout", map[string]string{"refresh_token": next.RefreshToken}, nil).Expect(t, 200)
	e.Do("POST", "/api/auth/refresh", map[string]string{"refresh_token": next.RefreshToken}, nil).Expect(t, 401)
	// No token at all is the answer it always was.
	if m := e.Do("POST", "/api/auth/refresh", map[string]any{}, nil).Expect(t, 401).Message; m != "invalid refresh token" {
		t.Fatalf("refresh without a token: %q", m)
	}
}

func TestConsoleCookieIsRefusedFromOtherOrigins(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	login := map[string]any{"email": apptest.AdminEmail, "password": apptest.AdminPassword, "cookie": true}
	for _, origin := range []string{"", "https://evil.example", "null", strings.Replace(e.Server.URL, "http://", "https://", 1)} {
		before := countRefreshTokens(t, e, "true")
		r := e.Do("POST", "/api/auth/login", login, page(origin, "")).Expect(t, 403)
		if r.Message != crossSite || sessionCookie(r) != nil {
			t.Fatalf("sign-in from %q: %q, cookie %v", origin, r.Message, r.Header.Values("Set-Cookie"))
		}
		if after := countRefreshTokens(t, e, "true"); after != before {
			t.Fatalf("a refused sign-in from %q opened a session", origin)
		}
	}
	// A Referer is not enough: the check wants the Origin header.
	e.Do("POST", "/api/auth/login", login, func(r *http.Request) { r.Header.Set("Referer", e.Server.URL+"/console/login") }).Expect(t, 403)

	token := consoleLogin(t, e)
	admin := e.Admin()
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Second Org"}, admin.Auth()).Expect(t, 201).Into(t, &org)
	for _, origin := range []string{"", "https://evil.example"} {
		for _, path := range []string{"/api/auth/refresh", "/api/auth/logout"} {
			r := e.Do("POST", path, map[string]any{}, page(origin, token)).Expect(t, 403)
			if r.Message != crossSite || sessionCookie(r) != nil {
				t.Fatalf("%s from %q: %q, cookie %v", path, origin, r.Message, r.Header.Values("Set-Cookie"))
			}
		}
		before := countRefreshTokens(t, e, "true")
		e.Do("POST", "/api/auth/switch-org", map[string]any{"organization_id": org.ID, "cookie": true}, page(origin, token, admin.Auth())).Expect(t, 403)
		if after := countRefreshTokens(t, e, "true"); after != before {
			t.Fatalf("a refused switch from %q opened a session", origin)
		}
	}
	// Nothing was spent or revoked: the cookie still refreshes.
	if n := countRefreshTokens(t, e, "used_at IS NOT NULL OR revoked_at IS NOT NULL"); n != 0 {
		t.Fatalf("refused requests spent or revoked %d tokens", n)
	}
	e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, token)).Expect(t, 200)
}

func TestConsoleCookieIsSecureOverHTTPS(t *testing.T) {
	t.Parallel()
	login := map[string]any{"email": apptest.AdminEmail, "password": apptest.AdminPassword, "cookie": true}

	// Behind a proxy that terminates TLS: PUBLIC_URL names the origin.
	e := apptest.New(t, map[string]string{"PUBLIC_URL": "https://wharf.example.com"})
	r := e.Do("POST", "/api/auth/login", login, page("https://wharf.example.com", "")).Expect(t, 200)
	if c := sessionCookie(r); c == nil || !c.Secure || !c.HttpOnly {
		t.Fatalf("cookie over HTTPS: %v", r.Header.Values("Set-Cookie"))
	}

	// Or a trusted proxy says the scheme; an untrusted one is not believed.
	https := strings.Replace(e.Server.URL, "http://", "https://", 1)
	forwarded := func(r *http.Request) { r.Header.Set("X-Forwarded-Proto", "https") }
	e.Do("POST", "/api/auth/login", login, page(https, "", forwarded)).Expect(t, 403)
	trusting := apptest.New(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.1"})
	https = strings.Replace(trusting.Server.URL, "http://", "https://", 1)
	r = trusting.Do("POST", "/api/auth/login", login, page(https, "", forwarded)).Expect(t, 200)
	if c := sessionCookie(r); c == nil || !c.Secure {
		t.Fatalf("cookie behind a trusted TLS proxy: %v", r.Header.Values("Set-Cookie"))
	}
}

func TestConsoleCookieReuseRevokesTheSessionFamily(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	first := consoleLogin(t, e)
	r := e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, first)).Expect(t, 200)
	second := sessionCookie(r).Value

	// The spent cookie comes back (stolen, or replayed): the family is
	// revoked, and the browser told to drop the cookie.
	r = e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, first)).Expect(t, 401)
	if !strings.Contains(r.Message, "already used") {
		t.Fatalf("reuse: %q", r.Message)
	}
	if c := sessionCookie(r); c == nil || c.MaxAge >= 0 {
		t.Fatalf("the refused cookie was not cleared: %v", r.Header.Values("Set-Cookie"))
	}
	r = e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, second)).Expect(t, 401)
	if r.Message != "refresh token has been revoked" {
		t.Fatalf("the rotated cookie after reuse: %q", r.Message)
	}
}

func TestConsoleSignOutRevokesAndClearsTheCookie(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	token := consoleLogin(t, e)
	r := e.Do("POST", "/api/auth/logout", map[string]any{}, page(e.Server.URL, token)).Expect(t, 200)
	if c := sessionCookie(r); c == nil || c.MaxAge >= 0 || c.Path != "/api/auth" {
		t.Fatalf("sign-out did not clear the cookie: %v", r.Header.Values("Set-Cookie"))
	}
	e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, token)).Expect(t, 401)
}

func TestConsoleSwitchOrgReplacesTheCookie(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	admin := e.Admin()
	var org struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Second Org"}, admin.Auth()).Expect(t, 201).Into(t, &org)

	old := consoleLogin(t, e)
	r := e.Do("POST", "/api/auth/switch-org", map[string]any{"organization_id": org.ID, "cookie": true},
		page(e.Server.URL, old, admin.Auth())).Expect(t, 200)
	if hasKey(t, r, "refresh_token") {
		t.Fatalf("the console's switch answer carries the refresh token: %s", r.Data)
	}
	c := sessionCookie(r)
	if c == nil || c.Value == old || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("switch cookie: %v", r.Header.Values("Set-Cookie"))
	}
	// The new cookie's session is in the second organization; the one it
	// replaced is over.
	var s apptest.Session
	e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, c.Value)).Expect(t, 200).Into(t, &s)
	var me struct {
		OrganizationID string `json:"organization_id"`
	}
	e.Do("GET", "/api/me", nil, s.Auth()).Expect(t, 200).Into(t, &me)
	if me.OrganizationID != org.ID {
		t.Fatalf("after the switch the cookie's session is in %s, want %s", me.OrganizationID, org.ID)
	}
	if m := e.Do("POST", "/api/auth/refresh", map[string]any{}, page(e.Server.URL, old)).Expect(t, 401).Message; m != "refresh token has been revoked" {
		t.Fatalf("the replaced cookie: %q", m)
	}
	// A switch without the flag is an API client's: tokens in the body, no
	// cookie.
	r = e.Do("POST", "/api/auth/switch-org", map[string]any{"organization_id": org.ID}, admin.Auth()).Expect(t, 200)
	if !hasKey(t, r, "refresh_token") || sessionCookie(r) != nil {
		t.Fatalf("a body switch: %s, cookie %v", r.Data, r.Header.Values("Set-Cookie"))
	}
}

func TestMeHasAvailabilityAndCurrentOrganizationItsTimeSettings(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	admin := e.Admin()
	agent := e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	var me struct {
		IsAvailable bool `json:"is_available"`
	}
	e.Do("GET", "/api/me", nil, agent.Auth()).Expect(t, 200).Into(t, &me)
	if !me.IsAvailable {
		t.Fatal("a new user is not available")
	}
	e.Do("PUT", "/api/users/"+agent.User.ID+"/availability", map[string]bool{"is_available": false}, agent.Auth()).Expect(t, 200)
	e.Do("GET", "/api/me", nil, agent.Auth()).Expect(t, 200).Into(t, &me)
	if me.IsAvailable {
		t.Fatal("/api/me still says available")
	}

	var cur struct{ Timezone, DateFormat string }
	decode := func() {
		var raw struct {
			Timezone   string `json:"timezone"`
			DateFormat string `json:"date_format"`
		}
		e.Do("GET", "/api/organizations/current", nil, agent.Auth()).Expect(t, 200).Into(t, &raw)
		cur.Timezone, cur.DateFormat = raw.Timezone, raw.DateFormat
	}
	decode()
	if cur.Timezone != "UTC" || cur.DateFormat != "YYYY-MM-DD" {
		t.Fatalf("defaults: %+v", cur)
	}
	e.Do("PUT", "/api/org/settings", map[string]string{"timezone": "Europe/Paris", "date_format": "DD/MM/YYYY"}, admin.Auth()).Expect(t, 200)
	decode() // an agent, who may not read the settings, sees them here
	if cur.Timezone != "Europe/Paris" || cur.DateFormat != "DD/MM/YYYY" {
		t.Fatalf("after the change: %+v", cur)
	}
}
