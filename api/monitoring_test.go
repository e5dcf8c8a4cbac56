package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"wharf/internal/apptest"
)

func get(t *testing.T, url string, set func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if set != nil {
		set(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestMonitoringUIIsForSuperAdminsOnly(t *testing.T) {
	e := apptest.New(t, map[string]string{"MONITORING_USER": "ops", "MONITORING_PASSWORD": "ops-password-1"})
	admin := e.Admin()
	agent := e.CreateUser(admin.Auth(), "agent@x.com", "Agent")
	orgAdmin := e.CreateUser(admin.Auth(), "orgadmin@x.com", "Admin")
	ui := e.Server.URL + "/monitoring"
	queues := e.Server.URL + "/monitoring/api/queues"

	res, body := get(t, ui, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+admin.AccessToken) })
	if res.StatusCode != 200 || !strings.Contains(strings.ToLower(body), "<html") {
		t.Fatalf("super admin: %d", res.StatusCode)
	}
	res, body = get(t, queues, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+admin.AccessToken) })
	if res.StatusCode != 200 || !strings.Contains(body, "queues") {
		t.Fatalf("super admin API: %d %s", res.StatusCode, body)
	}
	// Everyone else gets the same 401 as a wrong credential (no 403 that
	// would confirm a valid token or password).
	for name, s := range map[string]apptest.Session{"agent": agent, "org admin": orgAdmin} {
		res, body = get(t, queues, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+s.AccessToken) })
		if res.StatusCode != 401 || !strings.Contains(body, `"status":"error"`) {
			t.Fatalf("%s: %d %s", name, res.StatusCode, body)
		}
	}
	res, _ = get(t, ui, nil)
	if res.StatusCode != 401 || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("anonymous: %d %v", res.StatusCode, res.Header)
	}
	// Browsers use Basic authentication with the super admin's credentials,
	// or the operator credential.
	for _, c := range []struct {
		user, pass string
		want       int
	}{
		{apptest.AdminEmail, apptest.AdminPassword, 200},
		{apptest.AdminEmail, apptest.AdminPassword, 200}, // remembered
		{"ops", "ops-password-1", 200},
		{"agent@x.com", "password-123", 401},
		{apptest.AdminEmail, "wrong", 401},
		{"ops", "wrong", 401},
	} {
		res, _ = get(t, queues, func(r *http.Request) { r.SetBasicAuth(c.user, c.pass) })
		if res.StatusCode != c.want {
			t.Errorf("basic %s/%s: %d, want %d", c.user, c.pass, res.StatusCode, c.want)
		}
	}
}
