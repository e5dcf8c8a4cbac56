package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
)

// answer is a raw HTTP answer.
type answer struct {
	Status int
	Header http.Header
	Body   string
}

// request sends a request from the client address addr (through
// X-Forwarded-For: the environments of these tests trust 127.0.0.1 as a
// proxy); set adds credentials or headers.
func request(t *testing.T, e *apptest.Env, method, path string, body any, addr string, set func(*http.Request)) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.Server.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if addr != "" {
		req.Header.Set("X-Forwarded-For", addr)
	}
	if set != nil {
		set(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{Status: res.StatusCode, Header: res.Header, Body: string(b)}
}

func basic(user, pass string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}

const monQueues = "/monitoring/api/queues"

var proxied = map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32", "MONITORING_USER": "ops", "MONITORING_PASSWORD": "ops-password-1"}

// After ten failures for an account, every Basic sign-in as that account is
// refused, from any address and with the right password (even one the gate
// remembers), without any password being checked. A bearer token still
// works.
func TestMonitoringLocksAnAccountAfterTenFailures(t *testing.T) {
	e := apptest.New(t, proxied)
	admin := e.Admin()
	ids := e.API.Server.Identity
	// Verified once, so the gate remembers this credential.
	if a := request(t, e, "GET", monQueues, nil, "10.0.0.3", basic(apptest.AdminEmail, apptest.AdminPassword)); a.Status != 200 {
		t.Fatalf("first sign-in: %d %s", a.Status, a.Body)
	}
	for i := 0; i < 10; i++ {
		if a := request(t, e, "GET", monQueues, nil, "10.0.0.1", basic(apptest.AdminEmail, "wrong-"+strconv.Itoa(i))); a.Status != 401 {
			t.Fatalf("failure %d: %d", i, a.Status)
		}
	}
	work := ids.PasswordWork()
	for _, addr := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		if a := request(t, e, "GET", monQueues, nil, addr, basic(apptest.AdminEmail, apptest.AdminPassword)); a.Status != 401 {
			t.Errorf("right password from %s after ten failures: %d, want 401", addr, a.Status)
		}
	}
	if n := ids.PasswordWork() - work; n != 0 {
		t.Fatalf("refused attempts ran %d password checks", n)
	}
	if a := request(t, e, "GET", monQueues, nil, "10.0.0.1", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+admin.AccessToken) }); a.Status != 200 {
		t.Fatalf("bearer token during the lockout: %d", a.Status)
	}
}

// After ten failures from an address, every account is refused from there,
// the operator credential included; other addresses are not affected.
func TestMonitoringLocksAnAddressAfterTenFailures(t *testing.T) {
	e := apptest.New(t, proxied)
	ids := e.API.Server.Identity
	for i := 0; i < 10; i++ {
		request(t, e, "GET", monQueues, nil, "10.0.0.5", basic("guess"+strconv.Itoa(i)+"@x.com", "password-123"))
	}
	work := ids.PasswordWork()
	for _, cred := range [][2]string{{apptest.AdminEmail, apptest.AdminPassword}, {"ops", "ops-password-1"}} {
		if a := request(t, e, "GET", monQueues, nil, "10.0.0.5", basic(cred[0], cred[1])); a.Status != 401 {
			t.Errorf("%s from the locked address: %d, want 401", cred[0], a.Status)
		}
		if a := request(t, e, "GET", monQueues, nil, "10.0.0.6", basic(cred[0], cred[1])); a.Status != 200 {
			t.Errorf("%s from another address: %d, want 200", cred[0], a.Status)
		}
	}
	if n := ids.PasswordWork() - work; n != 1 { // the admin's sign-in from 10.0.0.6
		t.Fatalf("%d password checks, want 1", n)
	}
}

// Every failure answers exactly the same: the right password of someone
// who is not a super admin is indistinguishable from a wrong one.
func TestMonitoringAnswersEveryFailureAlike(t *testing.T) {
	e := apptest.New(t, proxied)
	admin := e.Admin()
	agent := e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	e.CreateUser(admin.Auth(), "gone@x.com", "Agent")
	e.Do("PUT", "/api/users/"+userID(t, e, admin.Auth(), "gone@x.com"), map[string]any{"is_active": false}, admin.Auth()).Expect(t, 200)
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	cases := map[string]func(*http.Request){
		"wrong password":                    basic(apptest.AdminEmail, "wrong-password"),
		"right password, not super":         basic("agent@x.com", "password-123"),
		"unknown user":                      basic("nobody@x.com", "password-123"),
		"disabled user, right password":     basic("gone@x.com", "password-123"),
		"operator name, wrong password":     basic("ops", "wrong"),
		"no credentials":                    nil,
		"invalid bearer token":              bearer("not-a-token"),
		"bearer token of a non-super admin": bearer(agent.AccessToken),
	}
	var want answer
	first := ""
	i := 0
	for name, set := range cases {
		i++
		a := request(t, e, "GET", monQueues, nil, "10.0.1."+strconv.Itoa(i), set)
		a.Header.Del("Date")
		a.Header.Del("X-Request-Id")
		if a.Status != 401 || !strings.HasPrefix(a.Header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("%s: %d %v", name, a.Status, a.Header)
		}
		if first == "" {
			first, want = name, a
			continue
		}
		if a.Body != want.Body || !sameHeaders(a.Header, want.Header) {
			t.Errorf("%s answers differently from %s:\n%v %s\n%v %s", name, first, a.Header, a.Body, want.Header, want.Body)
		}
	}
}

func sameHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if strings.Join(a[k], ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}

// The monitor's state-changing requests authenticated by Basic (which the
// browser attaches on its own) need a same-origin Origin or Referer.
func TestMonitoringRefusesCrossSiteRequests(t *testing.T) {
	e := apptest.New(t, map[string]string{"PUBLIC_URL": "https://wharf.example.com"})
	admin := e.Admin()
	// A scheduled task that the refused requests must leave in place.
	opts := e.Redis.Options()
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB, Password: opts.Password})
	defer client.Close()
	schedule := func() {
		t.Helper()
		if _, err := client.Enqueue(asynq.NewTask("test:noop", nil), asynq.Queue("csrf"), asynq.ProcessIn(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	scheduled := func() int {
		t.Helper()
		info, err := e.Inspector().GetQueueInfo("csrf")
		if err != nil {
			t.Fatal(err)
		}
		return info.Scheduled
	}
	schedule()
	const del = "/monitoring/api/queues/csrf/scheduled_tasks:delete_all"
	header := func(k, v string) func(*http.Request) {
		return func(r *http.Request) {
			r.SetBasicAuth(apptest.AdminEmail, apptest.AdminPassword)
			if k != "" {
				r.Header.Set(k, v)
			}
		}
	}
	for _, c := range []struct {
		name, k, v string
		want       int
	}{
		{"no Origin or Referer", "", "", 403},
		{"foreign Origin", "Origin", "https://evil.example", 403},
		{"null Origin", "Origin", "null", 403},
		{"foreign Referer", "Referer", "https://evil.example/monitoring", 403},
		{"same host, other scheme", "Origin", strings.Replace(e.Server.URL, "http://", "https://", 1), 403},
		{"PUBLIC_URL's host over http", "Origin", "http://wharf.example.com", 403},
		{"same Origin", "Origin", e.Server.URL, 200},
		{"same-origin Referer", "Referer", e.Server.URL + "/monitoring/queues", 200},
		{"PUBLIC_URL's Origin", "Origin", "https://wharf.example.com", 200},
		{"PUBLIC_URL's Origin with its default port", "Origin", "https://wharf.example.com:443", 200},
	} {
		a := request(t, e, "DELETE", del, nil, "", header(c.k, c.v))
		if a.Status != c.want || (c.want == 403 && !strings.Contains(a.Body, "cross-site request refused")) {
			t.Errorf("%s: %d %s, want %d", c.name, a.Status, a.Body, c.want)
		}
		if n := scheduled(); (c.want == 403) != (n == 1) {
			t.Errorf("%s: %d scheduled tasks after the request", c.name, n)
		}
		if n := scheduled(); n == 0 {
			schedule()
		}
	}
	// Reads need no Origin; bearer tokens are not ambient.
	if a := request(t, e, "GET", monQueues, nil, "", header("", "")); a.Status != 200 {
		t.Fatalf("GET: %d", a.Status)
	}
	if a := request(t, e, "DELETE", del, nil, "", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+admin.AccessToken) }); a.Status != 200 {
		t.Fatalf("bearer DELETE: %d %s", a.Status, a.Body)
	}
	// X-Forwarded-Proto counts only from a trusted proxy.
	https := strings.Replace(e.Server.URL, "http://", "https://", 1)
	xfp := func(r *http.Request) {
		header("Origin", https)(r)
		r.Header.Set("X-Forwarded-Proto", "https")
	}
	if a := request(t, e, "DELETE", del, nil, "", xfp); a.Status != 403 {
		t.Fatalf("X-Forwarded-Proto from an untrusted peer: %d", a.Status)
	}
	trusted := apptest.New(t, map[string]string{"TRUSTED_PROXIES": "127.0.0.1/32"})
	opts = trusted.Redis.Options()
	client2 := asynq.NewClient(asynq.RedisClientOpt{Addr: opts.Addr, DB: opts.DB, Password: opts.Password})
	defer client2.Close()
	if _, err := client2.Enqueue(asynq.NewTask("test:noop", nil), asynq.Queue("csrf"), asynq.ProcessIn(time.Hour)); err != nil {
		t.Fatal(err)
	}
	https = strings.Replace(trusted.Server.URL, "http://", "https://", 1)
	if a := request(t, trusted, "DELETE", del, nil, "", func(r *http.Request) {
		r.SetBasicAuth(apptest.AdminEmail, apptest.AdminPassword)
		r.Header.Set("Origin", https)
		r.Header.Set("X-Forwarded-Proto", "https")
	}); a.Status != 200 {
		t.Fatalf("X-Forwarded-Proto from a trusted proxy: %d %s", a.Status, a.Body)
	}
}

// Login: ten failures lock the (email, address) pair and a hundred lock the
// address, before any password is checked; the owner signs in from
// elsewhere.
func TestLoginLockout(t *testing.T) {
	e := apptest.New(t, proxied)
	admin := e.Admin()
	e.CreateUser(admin.Auth(), "u@x.com", "Agent")
	ids := e.API.Server.Identity
	login := func(email, pw, addr string) answer {
		return request(t, e, "POST", "/api/auth/login", map[string]string{"email": email, "password": pw}, addr, nil)
	}
	for i := 0; i < 10; i++ {
		if a := login("U@x.com", "wrong-password", "10.0.0.1"); a.Status != 401 {
			t.Fatalf("failure %d: %d", i, a.Status)
		}
	}
	work := ids.PasswordWork()
	var answers []answer
	for _, pw := range []string{"password-123", "wrong-password"} {
		a := login("u@x.com", pw, "10.0.0.1")
		retry, _ := strconv.Atoi(a.Header.Get("Retry-After"))
		if a.Status != 429 || retry < 1 || retry > 900 || !strings.Contains(a.Body, "too many failed sign-in attempts") {
			t.Fatalf("password %q after ten failures: %d %v %s", pw, a.Status, a.Header, a.Body)
		}
		answers = append(answers, a)
	}
	if answers[0].Body != answers[1].Body {
		t.Fatalf("a locked pair answers differently for the right password: %s / %s", answers[0].Body, answers[1].Body)
	}
	if n := ids.PasswordWork() - work; n != 0 {
		t.Fatalf("refused logins ran %d password checks", n)
	}
	// The owner is not locked out from another address.
	if a := login("u@x.com", "password-123", "10.0.0.2"); a.Status != 200 {
		t.Fatalf("login from another address: %d %s", a.Status, a.Body)
	}

	// A hundred failures from one address, over many accounts, lock it.
	for i := 0; i < 100; i++ {
		login("spray"+strconv.Itoa(i)+"@x.com", "password-123", "10.0.0.3")
	}
	work = ids.PasswordWork()
	if a := login("u@x.com", "password-123", "10.0.0.3"); a.Status != 429 {
		t.Fatalf("login from a spraying address: %d", a.Status)
	}
	if n := ids.PasswordWork() - work; n != 0 {
		t.Fatalf("a refused login ran %d password checks", n)
	}
}
