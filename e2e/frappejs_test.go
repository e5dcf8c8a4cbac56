package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
)

// A client made for Frappe works unchanged: e2e/frappejs/client.js uses the
// npm package frappe-js-sdk (pinned in its package.json and lock) with
// token authentication for CRUD, a filtered and paged list, counts and a
// method call against a real api. npm ci installs it (from the npm cache
// when it is there). Without node and npm the test is skipped, unless
// WHARF_REQUIRE_NPM=1, which CI sets.
func TestFrappeJSClient(t *testing.T) {
	t.Parallel()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		if os.Getenv("WHARF_REQUIRE_NPM") == "1" {
			t.Fatalf("node and npm are required (WHARF_REQUIRE_NPM=1): %v %v", errNode, errNpm)
		}
		t.Skip("node or npm is not installed: the frappe-js-sdk client is not run (WHARF_REQUIRE_NPM=1 makes this a failure)")
	}
	dir, err := filepath.Abs("frappejs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}

	e := apptest.New(t, nil)
	admin := e.Admin()
	api := frappeClient{t, e, admin.Auth()}
	api.data("POST", doctypes, map[string]any{"name": "Ticket", "autoname": "TCK-.#####", "title_field": "subject", "fields": []map[string]any{
		{"fieldname": "subject", "fieldtype": "Data", "reqd": 1},
		{"fieldname": "priority", "fieldtype": "Select", "options": "Low\nHigh"},
		{"fieldname": "hours", "fieldtype": "Int", "search_index": 1}}}, 201)
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	e.Do("POST", "/api/api-keys", map[string]any{"name": "frappe-js-sdk"}, admin.Auth()).Expect(t, 201).Into(t, &key)

	run := exec.CommandContext(ctx, node, "client.js")
	run.Dir = dir
	run.Env = append(cleanEnv(), "WHARF_URL="+e.Server.URL, "WHARF_API_KEY="+key.ID, "WHARF_API_SECRET="+strings.TrimPrefix(key.Key, "whm_"))
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("node client.js: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var got struct {
		Created      string   `json:"created"`
		Owner        string   `json:"owner"`
		GotSubject   string   `json:"got_subject"`
		GotHours     int      `json:"got_hours"`
		UpdatedHours int      `json:"updated_hours"`
		High         []string `json:"high"`
		Paged        []string `json:"paged"`
		Count        int      `json:"count"`
		User         string   `json:"user"`
		Last         string   `json:"last"`
		Invalid      any      `json:"invalid"`
		Missing      any      `json:"missing"`
		Deleted      string   `json:"deleted"`
		Remaining    int      `json:"remaining"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("client output: %v\n%s", err, stdout.String())
	}
	if got.Created != "TCK-00001" || got.Owner != apptest.AdminEmail || got.GotSubject != "Printer on fire" || got.GotHours != 3 || got.UpdatedHours != 5 {
		t.Errorf("CRUD through the SDK: %+v", got)
	}
	if strings.Join(got.High, "|") != "Server room door:8|Printer on fire:5" || strings.Join(got.Paged, "|") != "Printer on fire" {
		t.Errorf("lists: high %v, paged %v", got.High, got.Paged)
	}
	if got.Count != 2 || got.User != apptest.AdminEmail || got.Last != "Server room door" || got.Deleted != "ok" || got.Remaining != 2 {
		t.Errorf("count %d, user %q, last %q, deleted %q, remaining %d", got.Count, got.User, got.Last, got.Deleted, got.Remaining)
	}
	refusal := func(v any) (float64, string) {
		m, _ := v.(map[string]any)
		s, _ := m["status"].(float64)
		x, _ := m["exc_type"].(string)
		return s, x
	}
	if s, x := refusal(got.Invalid); s != 417 || x != "ValidationError" {
		t.Errorf("invalid select through the SDK: %v", got.Invalid)
	}
	if s, x := refusal(got.Missing); s != 404 || x != "DoesNotExistError" {
		t.Errorf("missing document through the SDK: %v", got.Missing)
	}
	var names []string
	e.DB.Raw(`SELECT name FROM docframe_documents WHERE doctype = 'Ticket' ORDER BY name`).Scan(&names)
	if strings.Join(names, ",") != "TCK-00002,TCK-00003" {
		t.Fatalf("stored tickets %v", names)
	}
}

// cleanEnv is the environment without proxy settings: axios honours them,
// and the api listens on loopback.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "NO_PROXY=*")
}
