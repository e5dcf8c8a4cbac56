package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
)

// actionOut is a custom action as the api answers it.
type actionOut struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Icon         string         `json:"icon"`
	ActionType   string         `json:"action_type"`
	Config       map[string]any `json:"config"`
	IsActive     bool           `json:"is_active"`
	DisplayOrder int            `json:"display_order"`
}

// runOut is the answer of an execution.
type runOut struct {
	Success     bool            `json:"success"`
	Message     string          `json:"message"`
	Data        json.RawMessage `json:"data"`
	RedirectURL string          `json:"redirect_url"`
	Toast       *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"toast"`
}

// actionsEnv is a system with a manager and an agent in the bootstrap
// organization, and a contact whose name holds every character escaping
// must handle.
type actionsEnv struct {
	*apptest.Env
	admin, manager, agent apptest.Session
	contactID, phone      string
}

const awkwardName = `Zoë "Z" O'Neil & Sons / Ltd ?#=+ 日本`

func newActionsEnv(t *testing.T, overrides map[string]string) *actionsEnv {
	e := &actionsEnv{Env: apptest.New(t, overrides)}
	e.admin = e.Admin()
	e.manager = e.CreateUser(e.admin.Auth(), "manager@actions.test", "Manager")
	e.agent = e.CreateUser(e.admin.Auth(), "agent@actions.test", "Agent")
	var c struct {
		ID          string `json:"id"`
		PhoneNumber string `json:"phone_number"`
	}
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550170001", "name": awkwardName}, e.agent.Auth()).Expect(t, 201).Into(t, &c)
	e.contactID, e.phone = c.ID, c.PhoneNumber
	return e
}

func (e *actionsEnv) create(t *testing.T, body map[string]any) actionOut {
	t.Helper()
	var a actionOut
	e.Do("POST", "/api/custom-actions", body, e.manager.Auth()).Expect(t, 201).Into(t, &a)
	return a
}

func (e *actionsEnv) run(t *testing.T, id string, auth apptest.Auth) runOut {
	t.Helper()
	var r runOut
	e.Do("POST", "/api/custom-actions/"+id+"/execute", map[string]any{"contact_id": e.contactID}, auth).Expect(t, 200).Into(t, &r)
	return r
}

func (e *actionsEnv) stored(t *testing.T, id string) models.CustomAction {
	t.Helper()
	var a models.CustomAction
	if err := e.DB.Take(&a, "id = ?", id).Error; err != nil {
		t.Fatal(err)
	}
	return a
}

// CRUD through the router, with every refusal on create and on update
// leaving the rows as they were, and the role matrix: Admin and Manager
// manage, Agent lists and runs.
func TestCustomActionsCRUDValidationAndRoles(t *testing.T) {
	t.Parallel()
	e := newActionsEnv(t, nil)
	m, ag := e.manager.Auth(), e.agent.Auth()

	e.Do("POST", "/api/custom-actions", map[string]any{"name": "X", "action_type": "javascript", "config": map[string]any{"code": "1"}}, ag).Expect(t, 403)
	hook := e.create(t, map[string]any{"name": "Create ticket", "icon": "ticket", "action_type": "webhook", "display_order": 2,
		"config": map[string]any{"url": "https://tickets.example/new?c={{contact.id}}", "body": `{"n": "{{contact.name}}"}`}})
	if hook.Icon != "ticket" || !hook.IsActive || hook.DisplayOrder != 2 || hook.Config["method"] != "POST" || hook.Config["body"] != `{"n": "{{contact.name}}"}` {
		t.Fatalf("created %+v", hook)
	}
	link := e.create(t, map[string]any{"name": "Open CRM", "action_type": "url", "config": map[string]any{"url": "https://crm.example/{{contact.id}}"}})
	if link.Icon != "zap" || link.Config["open_in_new_tab"] != true || link.DisplayOrder != 0 {
		t.Fatalf("defaults %+v", link)
	}
	script := e.create(t, map[string]any{"name": "alert", "icon": "code", "action_type": "javascript", "display_order": 2,
		"config": map[string]any{"code": "alert(1)"}})

	var list struct {
		CustomActions []actionOut `json:"custom_actions"`
	}
	e.Do("GET", "/api/custom-actions", nil, ag).Expect(t, 200).Into(t, &list)
	if len(list.CustomActions) != 3 || list.CustomActions[0].ID != link.ID || list.CustomActions[1].ID != script.ID || list.CustomActions[2].ID != hook.ID {
		t.Fatalf("order: %+v", list.CustomActions)
	}
	var one actionOut
	e.Do("GET", "/api/custom-actions/"+hook.ID, nil, ag).Expect(t, 200).Into(t, &one)
	if one.Name != "Create ticket" || one.Config["url"] != "https://tickets.example/new?c={{contact.id}}" {
		t.Fatalf("get %+v", one)
	}

	base := func(typ string, cfg map[string]any) map[string]any {
		return map[string]any{"name": "New", "action_type": typ, "config": cfg}
	}
	wh := func(extra map[string]any) map[string]any {
		cfg := map[string]any{"url": "https://x.example/h"}
		for k, v := range extra {
			cfg[k] = v
		}
		return cfg
	}
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"name": "New", "icon": "rocket", "action_type": "url", "config": map[string]any{"url": "https://x.example"}}, "icon must be one of"},
		{base("sms", map[string]any{"url": "https://x.example"}), "action_type must be one of webhook, url, javascript"},
		{map[string]any{"action_type": "url", "config": map[string]any{"url": "https://x.example"}}, "name is required"},
		{map[string]any{"name": "New", "config": map[string]any{"url": "https://x.example"}}, "action_type is required"},
		{map[string]any{"name": "New", "action_type": "url"}, "config is required"},
		{base("webhook", map[string]any{}), "config.url is required"},
		{base("webhook", wh(map[string]any{"url": "ftp://x.example/"})), "config.url must be an http or https URL"},
		{base("webhook", wh(map[string]any{"method": "DELETE"})), "config.method must be one of POST, GET, PUT, PATCH"},
		{base("webhook", wh(map[string]any{"headers": map[string]any{"X-A": 1}})), "config.headers must be an object of strings"},
		{base("webhook", wh(map[string]any{"headers": "X-A: 1"})), "config.headers must be an object of strings"},
		{base("webhook", wh(map[string]any{"body": `{"id": {{contact.id}}}`})), "config.body must be a JSON template"},
		{base("webhook", wh(map[string]any{"body": `not json`})), "config.body must be a JSON template"},
		{base("webhook", wh(map[string]any{"body": `{"e": "{{contact.email}}"}`})), "config.body: unknown variable {{contact.email}}"},
		{base("webhook", wh(map[string]any{"method": "GET", "body": `{}`})), "a GET webhook sends no body"},
		{base("url", map[string]any{"url": "javascript:alert(document.cookie)"}), "config.url must be an http or https URL"},
		{base("url", map[string]any{"url": "https://x.example", "open_in_new_tab": "no"}), "config.open_in_new_tab must be a boolean"},
		{base("javascript", map[string]any{"source": "alert(1)"}), "config.code is required for a javascript action"},
	} {
		if r := e.Do("POST", "/api/custom-actions", c.body, m).Expect(t, 400); !strings.Contains(r.Message, c.want) {
			t.Errorf("create %v: %q, want %q", c.body, r.Message, c.want)
		}
	}
	if r := e.Do("POST", "/api/custom-actions", map[string]any{"name": "create TICKET", "action_type": "javascript",
		"config": map[string]any{"code": "1"}}, m).Expect(t, 409); r.Message != "Custom action with this name already exists" {
		t.Fatalf("duplicate: %q", r.Message)
	}
	if n := e.count(t, "custom_actions"); n != 3 {
		t.Fatalf("%d actions after refused creations", n)
	}

	before := e.stored(t, hook.ID)
	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"icon": "rocket"}, "icon must be one of"},
		{map[string]any{"action_type": "sms"}, "action_type must be one of"},
		{map[string]any{"action_type": "javascript"}, "config.code is required for a javascript action"}, // the stored webhook config, re-checked
		{map[string]any{"action_type": "url", "config": map[string]any{"url": "file:///etc/passwd"}}, "config.url must be an http or https URL"},
		{map[string]any{"config": map[string]any{"url": "https://x.example", "method": "TRACE"}}, "config.method must be one of"},
		{map[string]any{"config": map[string]any{"url": "https://x.example", "body": "{"}}, "config.body must be a JSON template"},
		{map[string]any{"config": map[string]any{"url": "https://x.example", "headers": []string{"a"}}}, "config.headers must be an object of strings"},
		{map[string]any{"name": " "}, "name is required"},
	} {
		if r := e.Do("PUT", "/api/custom-actions/"+hook.ID, c.body, m).Expect(t, 400); !strings.Contains(r.Message, c.want) {
			t.Errorf("update %v: %q, want %q", c.body, r.Message, c.want)
		}
	}
	if r := e.Do("PUT", "/api/custom-actions/"+hook.ID, map[string]any{"name": "Open crm"}, m).Expect(t, 409); r.Message != "Custom action with this name already exists" {
		t.Fatalf("rename onto another: %q", r.Message)
	}
	if after := e.stored(t, hook.ID); !after.UpdatedAt.Equal(before.UpdatedAt) || after.ActionType != "webhook" || after.Icon != "ticket" ||
		after.Config.V["url"] != before.Config.V["url"] {
		t.Fatalf("refused updates changed the action: %+v", after)
	}
	e.Do("PUT", "/api/custom-actions/"+hook.ID, map[string]any{"name": "Y"}, ag).Expect(t, 403)

	var up actionOut
	e.Do("PUT", "/api/custom-actions/"+hook.ID, map[string]any{"action_type": "url", "config": map[string]any{"url": "https://crm.example/x",
		"open_in_new_tab": false}, "is_active": false, "display_order": -1}, m).Expect(t, 200).Into(t, &up)
	if up.ActionType != "url" || up.IsActive || up.DisplayOrder != -1 || up.Config["open_in_new_tab"] != false || up.Config["method"] != nil || up.Name != "Create ticket" {
		t.Fatalf("updated %+v", up)
	}
	if s := e.stored(t, hook.ID); s.ActionType != "url" || s.IsActive || s.Config.V["url"] != "https://crm.example/x" {
		t.Fatalf("stored %+v", s)
	}
	if r := e.Do("POST", "/api/custom-actions/"+hook.ID+"/execute", map[string]any{"contact_id": e.contactID}, ag).Expect(t, 400); r.Message != "this custom action is inactive" {
		t.Fatalf("inactive: %q", r.Message)
	}
	e.Do("POST", "/api/custom-actions/"+script.ID+"/execute", map[string]any{}, ag).Expect(t, 400)
	e.Do("POST", "/api/custom-actions/"+script.ID+"/execute", map[string]any{"contact_id": "nope"}, ag).Expect(t, 400)

	e.Do("DELETE", "/api/custom-actions/"+script.ID, nil, ag).Expect(t, 403)
	var del struct{ Status string }
	e.Do("DELETE", "/api/custom-actions/"+script.ID, nil, m).Expect(t, 200).Into(t, &del)
	if del.Status != "deleted" || e.count(t, "custom_actions") != 2 {
		t.Fatalf("delete: %+v", del)
	}
	e.Do("DELETE", "/api/custom-actions/"+script.ID, nil, m).Expect(t, 404)
	e.Do("GET", "/api/custom-actions/"+script.ID, nil, m).Expect(t, 404)
}

func (e *actionsEnv) count(t *testing.T, table string) int64 {
	var n int64
	if err := e.DB.Table(table).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// Another organization's actions are 404 on every route, and an action
// cannot be run for another organization's contact.
func TestCustomActionsTenancy(t *testing.T) {
	t.Parallel()
	e := newActionsEnv(t, nil)
	a := e.create(t, map[string]any{"name": "S", "action_type": "javascript", "config": map[string]any{"code": "1"}})

	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, e.admin.Auth()).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, e.admin.Auth()).Expect(t, 200).Into(t, &inB)
	b := e.CreateUser(inB.Auth(), "b-admin@actions.test", "Admin")
	var contactB struct{ ID string }
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550170002", "name": "B's"}, b.Auth()).Expect(t, 201).Into(t, &contactB)

	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/custom-actions/" + a.ID, nil},
		{"PUT", "/api/custom-actions/" + a.ID, map[string]any{"name": "mine"}},
		{"DELETE", "/api/custom-actions/" + a.ID, nil},
		{"POST", "/api/custom-actions/" + a.ID + "/execute", map[string]any{"contact_id": contactB.ID}},
	} {
		e.Do(c.method, c.path, c.body, b.Auth()).Expect(t, 404)
	}
	var list struct {
		CustomActions []actionOut `json:"custom_actions"`
	}
	e.Do("GET", "/api/custom-actions", nil, b.Auth()).Expect(t, 200).Into(t, &list)
	if len(list.CustomActions) != 0 {
		t.Fatalf("B lists %+v", list.CustomActions)
	}
	if r := e.Do("POST", "/api/custom-actions/"+a.ID+"/execute", map[string]any{"contact_id": contactB.ID}, e.agent.Auth()).Expect(t, 404); !strings.Contains(r.Message, "not found") {
		t.Fatalf("other org's contact: %q", r.Message)
	}
	if s := e.stored(t, a.ID); s.Name != "S" {
		t.Fatalf("B changed A's action: %+v", s)
	}
}

// recorder is a receiver of webhook actions that answers what the test
// says and keeps what it got.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	Method, Path, RawQuery string
	Query                  url.Values
	Header                 http.Header
	Body                   string
}

func newRecorder(t *testing.T, answer http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{Method: req.Method, Path: req.URL.Path, RawQuery: req.URL.RawQuery, Query: req.URL.Query(),
			Header: req.Header.Clone(), Body: string(b)})
		r.mu.Unlock()
		answer(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) got() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// An agent runs a webhook action against a real receiver: the variables
// arrive escaped for their places (path, query, header, JSON body), the
// receiver's JSON comes back as data; error answers, oversized answers and
// dead targets are 200s with success false.
func TestCustomActionWebhookAgainstAReceiver(t *testing.T) {
	t.Parallel()
	e := newActionsEnv(t, map[string]string{"OUTBOUND_ALLOW_PRIVATE": "true"}) // the receiver listens on 127.0.0.1
	rcv := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ticket": {"id": 77, "url": "https://tickets.example/77"}}`))
	})
	a := e.create(t, map[string]any{"name": "Ticket", "icon": "ticket", "action_type": "webhook", "config": map[string]any{
		"url":     rcv.URL + "/c/{{contact.name}}/tickets?name={{contact.name}}&phone={{contact.phone_number}}&by={{user.email}}",
		"method":  "POST",
		"headers": map[string]any{"X-Contact-Name": "{{contact.name}}", "X-Org": "{{organization.name}}", "Authorization": "Token abc"},
		"body":    `{"contact": {"id": "{{contact.id}}", "name": "{{contact.name}}", "phone": "{{contact.phone_number}}"}, "agent": "{{user.name}} <{{user.email}}> ({{user.role}})", "org": "{{organization.id}}"}`,
	}})
	// Masking is for people: the organization's own system gets the number.
	e.Do("PUT", "/api/organizations/settings", map[string]any{"mask_phone_numbers": true}, e.admin.Auth()).Expect(t, 200)

	res := e.run(t, a.ID, e.agent.Auth())
	if !res.Success || res.Message != "Webhook executed successfully" || res.Toast == nil || res.Toast.Type != "success" {
		t.Fatalf("run: %+v", res)
	}
	var data struct{ Ticket struct{ ID int } }
	if err := json.Unmarshal(res.Data, &data); err != nil || data.Ticket.ID != 77 {
		t.Fatalf("data %s", res.Data)
	}
	got := rcv.got()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	r := got[0]
	if r.Method != "POST" || r.Path != "/c/"+awkwardName+"/tickets" {
		t.Errorf("%s %q", r.Method, r.Path)
	}
	if len(r.Query) != 3 || r.Query.Get("name") != awkwardName || r.Query.Get("phone") != e.phone || r.Query.Get("by") != "agent@actions.test" {
		t.Errorf("query %q -> %v", r.RawQuery, r.Query)
	}
	if r.Header.Get("X-Contact-Name") != awkwardName || r.Header.Get("X-Org") != "Bootstrap Org" || r.Header.Get("Authorization") != "Token abc" ||
		r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", r.Header)
	}
	var body struct {
		Contact struct{ ID, Name, Phone string }
		Agent   string
		Org     string
	}
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	if body.Contact.ID != e.contactID || body.Contact.Name != awkwardName || body.Contact.Phone != e.phone ||
		body.Agent != "User agent@actions.test <agent@actions.test> (Agent)" || body.Org != e.agent.User.OrganizationID {
		t.Errorf("body %s", r.Body)
	}

	// The failures: all answered 200 with success false.
	failing := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(`{"error": "db down"}`))
	})
	huge := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(strings.Repeat("x", 2<<20))) })
	dead := "http://" + closedAddr(t) + "/hook"
	for _, c := range []struct{ url, msg, data string }{
		{failing.URL, "the target answered 500 Internal Server Error", `{"error":"db down"}`},
		{huge.URL, "the target's answer is larger than 1 MB (status 200)", "null"},
		{dead, "the target could not be reached", "null"},
	} {
		a := e.create(t, map[string]any{"name": c.url, "action_type": "webhook", "config": map[string]any{"url": c.url}})
		res := e.run(t, a.ID, e.agent.Auth())
		if res.Success || res.Message != c.msg || string(res.Data) != c.data || res.Toast == nil || res.Toast.Type != "error" ||
			strings.Contains(res.Message, "127.0.0.1") {
			t.Errorf("%s: %+v data %s", c.url, res, res.Data)
		}
	}
	if len(failing.got()) != 1 || len(huge.got()) != 1 {
		t.Fatalf("the failing targets were called %d and %d times", len(failing.got()), len(huge.got()))
	}
}

// On a strict instance (OUTBOUND_ALLOW_PRIVATE false) a private target is
// refused at save time, and an action saved while the instance allowed it
// is not called: the run answers 200 with success false.
func TestCustomActionWebhookPrivateTargetOnAStrictInstance(t *testing.T) {
	t.Parallel()
	lax := newActionsEnv(t, map[string]string{"OUTBOUND_ALLOW_PRIVATE": "true"})
	rcv := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {})
	a := lax.create(t, map[string]any{"name": "Local", "action_type": "webhook", "config": map[string]any{"url": rcv.URL + "/{{contact.id}}"}})

	// The same database and Redis, restarted strict.
	strict := &actionsEnv{Env: apptest.New(t, map[string]string{"DATABASE_URL": lax.Environ["DATABASE_URL"],
		"REDIS_URL": lax.Environ["REDIS_URL"], "ENCRYPTION_KEY": lax.Environ["ENCRYPTION_KEY"], "OUTBOUND_ALLOW_PRIVATE": "false"}),
		contactID: lax.contactID}
	mgr, agent := strict.Login("manager@actions.test", "password-123"), strict.Login("agent@actions.test", "password-123")
	if r := strict.Do("POST", "/api/custom-actions", map[string]any{"name": "Local 2", "action_type": "webhook",
		"config": map[string]any{"url": rcv.URL}}, mgr.Auth()).Expect(t, 400); r.Message != "config.url: the address is not allowed" {
		t.Fatalf("save: %q", r.Message)
	}
	for _, u := range []string{"http://169.254.169.254/latest/meta-data", "http://localhost:8080/", "http://[::1]/x"} {
		strict.Do("POST", "/api/custom-actions", map[string]any{"name": "Meta", "action_type": "webhook", "config": map[string]any{"url": u}}, mgr.Auth()).Expect(t, 400)
	}
	res := strict.run(t, a.ID, agent.Auth())
	if res.Success || res.Message != "the target's address is not allowed" || strings.Contains(string(strict.Do("POST",
		"/api/custom-actions/"+a.ID+"/execute", map[string]any{"contact_id": lax.contactID}, agent.Auth()).Body), "127.0.0.1") {
		t.Fatalf("run: %+v", res)
	}
	if n := len(rcv.got()); n != 0 {
		t.Fatalf("the private target was called %d times", n)
	}
}

// A URL action's link works once, without credentials, redirecting to the
// URL with the variables escaped in; then, and after its expiry, it is 404.
func TestCustomActionURLRedirectsOnce(t *testing.T) {
	t.Parallel()
	e := newActionsEnv(t, nil)
	a := e.create(t, map[string]any{"name": "CRM", "icon": "external-link", "action_type": "url",
		"config": map[string]any{"url": "http://crm.intranet.example/contacts/{{contact.name}}?phone={{contact.phone_number}}&by={{user.name}}#{{contact.id}}"}})
	res := e.run(t, a.ID, e.agent.Auth())
	if !res.Success || !strings.HasPrefix(res.RedirectURL, "/api/custom-actions/redirect/") || len(res.RedirectURL) != len("/api/custom-actions/redirect/")+64 {
		t.Fatalf("run: %+v", res)
	}
	token := strings.TrimPrefix(res.RedirectURL, "/api/custom-actions/redirect/")
	if ttl := e.Redis.TTL(t.Context(), "wharf:custom_actions:redirect:"+token).Val(); ttl <= 4*time.Minute || ttl > 5*time.Minute {
		t.Fatalf("token ttl %s", ttl)
	}

	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	open := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := browser.Get(e.Server.URL + path) // no credentials
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := open(res.RedirectURL)
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || err != nil {
		t.Fatalf("first open: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if loc.Scheme != "http" || loc.Host != "crm.intranet.example" || loc.Path != "/contacts/"+awkwardName || len(loc.Query()) != 2 ||
		loc.Query().Get("phone") != e.phone || loc.Query().Get("by") != "User agent@actions.test" || loc.Fragment != e.contactID {
		t.Fatalf("location %q", resp.Header.Get("Location"))
	}
	if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("headers %v", resp.Header)
	}
	resp, body := open(res.RedirectURL)
	if resp.StatusCode != 404 || !strings.Contains(body, "This link has expired or was already used") {
		t.Fatalf("second open: %d %s", resp.StatusCode, body)
	}
	if resp, _ := open("/api/custom-actions/redirect/" + strings.Repeat("0", 64)); resp.StatusCode != 404 {
		t.Fatalf("unknown token: %d", resp.StatusCode)
	}

	// Expiry: Redis forgets the token (shortened here from 5 minutes).
	res = e.run(t, a.ID, e.agent.Auth())
	e.Redis.PExpire(t.Context(), "wharf:custom_actions:redirect:"+strings.TrimPrefix(res.RedirectURL, "/api/custom-actions/redirect/"), time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	if resp, _ := open(res.RedirectURL); resp.StatusCode != 404 {
		t.Fatalf("expired token: %d", resp.StatusCode)
	}
}

// A javascript action is not run: the answer carries its code and the
// context; with masking on, the number the browser gets is masked.
func TestCustomActionJavaScriptContext(t *testing.T) {
	t.Parallel()
	e := newActionsEnv(t, nil)
	code := `fetch("https://crm.example/?p=" + encodeURIComponent(context.contact.phone_number))`
	a := e.create(t, map[string]any{"name": "Script", "icon": "code", "action_type": "javascript", "config": map[string]any{"code": code}})
	type scriptData struct {
		Code    string `json:"code"`
		Context struct {
			Contact struct {
				ID          string `json:"id"`
				PhoneNumber string `json:"phone_number"`
				Name        string `json:"name"`
				ProfileName string `json:"profile_name"`
			} `json:"contact"`
			User         struct{ ID, Name, Email, Role string } `json:"user"`
			Organization struct{ ID, Name string }              `json:"organization"`
		} `json:"context"`
	}
	decode := func(res runOut) scriptData {
		var d scriptData
		if err := json.Unmarshal(res.Data, &d); err != nil {
			t.Fatalf("data %s: %v", res.Data, err)
		}
		return d
	}
	res := e.run(t, a.ID, e.agent.Auth())
	d := decode(res)
	if !res.Success || res.Toast == nil || d.Code != code {
		t.Fatalf("run: %+v", res)
	}
	c := d.Context
	if c.Contact.ID != e.contactID || c.Contact.PhoneNumber != e.phone || c.Contact.Name != awkwardName ||
		c.User.ID != e.agent.User.ID || c.User.Email != "agent@actions.test" || c.User.Name != "User agent@actions.test" || c.User.Role != "Agent" ||
		c.Organization.ID != e.agent.User.OrganizationID || c.Organization.Name != "Bootstrap Org" {
		t.Fatalf("context %+v", c)
	}
	// The manager runs it as themself.
	if m := decode(e.run(t, a.ID, e.manager.Auth())).Context.User; m.Role != "Manager" || m.Email != "manager@actions.test" {
		t.Fatalf("manager's context %+v", m)
	}

	e.Do("PUT", "/api/organizations/settings", map[string]any{"mask_phone_numbers": true}, e.admin.Auth()).Expect(t, 200)
	masked := decode(e.run(t, a.ID, e.agent.Auth())).Context.Contact
	if masked.PhoneNumber == "" || masked.PhoneNumber == e.phone || strings.Contains(masked.PhoneNumber, "5550170001") || masked.Name != awkwardName {
		t.Fatalf("masked contact %+v", masked)
	}
}

// Secrets in an action's configuration are write-only: every header value
// and the URL's credential parameters are answered masked, to the Agent
// who reads actions and to the Manager who wrote them; sending the mask
// back keeps the stored value (the receiver still gets the original
// Authorization), another value replaces it, a header left out is removed,
// and a mask never follows the action to a new target.
func TestCustomActionSecretsAreWriteOnly(t *testing.T) {
	t.Parallel()
	e := newActionsEnv(t, map[string]string{"OUTBOUND_ALLOW_PRIVATE": "true"})
	rcv := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) })
	other := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) })
	const mask = "********"
	a := e.create(t, map[string]any{"name": "CRM", "action_type": "webhook", "config": map[string]any{
		"url":     rcv.URL + "/hook?api_key=K-123&page=1",
		"headers": map[string]any{"Authorization": "Bearer s3cret-token", "X-Tenant": "acme-tenant"},
	}})
	secretsOf := []string{"s3cret-token", "K-123", "acme-tenant"}
	masked := func(who string, body []byte) {
		t.Helper()
		for _, s := range secretsOf {
			if strings.Contains(string(body), s) {
				t.Errorf("%s reads %q: %s", who, s, body)
			}
		}
	}
	wantMasked := func(who string, cfg map[string]any) {
		t.Helper()
		h, _ := cfg["headers"].(map[string]any)
		if cfg["url"] != rcv.URL+"/hook?api_key="+mask+"&page=1" || h["Authorization"] != mask || h["X-Tenant"] != mask {
			t.Errorf("%s reads config %v", who, cfg)
		}
	}
	wantMasked("the creator", a.Config)
	for _, who := range []apptest.Session{e.agent, e.manager} {
		r := e.Do("GET", "/api/custom-actions", nil, who.Auth()).Expect(t, 200)
		masked("list", r.Body)
		var one actionOut
		r = e.Do("GET", "/api/custom-actions/"+a.ID, nil, who.Auth()).Expect(t, 200)
		r.Into(t, &one)
		masked("get", r.Body)
		wantMasked("get", one.Config)
	}
	lastHeaders := func() recorded {
		t.Helper()
		got := rcv.got()
		if len(got) == 0 {
			t.Fatal("the receiver got nothing")
		}
		return got[len(got)-1]
	}

	// A round trip of what GET answered, with a change elsewhere, keeps the
	// secrets: the receiver gets the original values.
	var updated actionOut
	e.Do("PUT", "/api/custom-actions/"+a.ID, map[string]any{"name": "CRM ticket", "config": a.Config}, e.manager.Auth()).Expect(t, 200).Into(t, &updated)
	wantMasked("the updater", updated.Config)
	if res := e.run(t, a.ID, e.agent.Auth()); !res.Success {
		t.Fatalf("run: %+v", res)
	}
	r := lastHeaders()
	if r.Header.Get("Authorization") != "Bearer s3cret-token" || r.Header.Get("X-Tenant") != "acme-tenant" || r.Query.Get("api_key") != "K-123" {
		t.Fatalf("after the round trip the receiver got %v ?%s", r.Header, r.RawQuery)
	}

	// A new value replaces; a header left out is removed.
	e.Do("PUT", "/api/custom-actions/"+a.ID, map[string]any{"config": map[string]any{"url": a.Config["url"],
		"headers": map[string]any{"Authorization": "Bearer rotated"}}}, e.manager.Auth()).Expect(t, 200)
	e.run(t, a.ID, e.agent.Auth())
	r = lastHeaders()
	if r.Header.Get("Authorization") != "Bearer rotated" || r.Header.Get("X-Tenant") != "" || r.Query.Get("api_key") != "K-123" {
		t.Fatalf("after the change the receiver got %v ?%s", r.Header, r.RawQuery)
	}

	// A mask with a new target, a mask of a header that has no stored value,
	// and a mask on create are refused, and change nothing.
	before := e.stored(t, a.ID)
	for _, c := range []struct {
		cfg map[string]any
		msg string
	}{
		{map[string]any{"url": other.URL + "/hook", "headers": map[string]any{"Authorization": mask}},
			"config.headers.Authorization: a masked value (********) is kept only while the URL's scheme, host and port stay the same"},
		{map[string]any{"url": other.URL + "/hook?api_key=" + mask}, "config.url: a masked value (********) is kept only while"},
		{map[string]any{"url": a.Config["url"], "headers": map[string]any{"X-Tenant": mask}},
			"config.headers.X-Tenant: the masked value ******** keeps a stored value, and there is none to keep"},
	} {
		r := e.Do("PUT", "/api/custom-actions/"+a.ID, map[string]any{"config": c.cfg}, e.manager.Auth()).Expect(t, 400)
		if !strings.HasPrefix(r.Message, c.msg) {
			t.Errorf("%v: %q", c.cfg, r.Message)
		}
	}
	if after := e.stored(t, a.ID); !reflect.DeepEqual(after.Config.V, before.Config.V) || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("a refused update changed the action: %v", after.Config.V)
	}
	if len(other.got()) != 0 {
		t.Fatal("the new target was called")
	}
	r2 := e.Do("POST", "/api/custom-actions", map[string]any{"name": "Copy", "action_type": "webhook", "config": map[string]any{
		"url": rcv.URL + "/hook", "headers": map[string]any{"Authorization": mask}}}, e.manager.Auth()).Expect(t, 400)
	if !strings.Contains(r2.Message, "there is none to keep") {
		t.Errorf("create with a mask: %q", r2.Message)
	}

	// A URL action's credential parameters are masked too.
	u := e.create(t, map[string]any{"name": "Open CRM", "action_type": "url", "config": map[string]any{
		"url": "https://crm.example.com/c/{{contact.id}}?token=T-999&view=full"}})
	if u.Config["url"] != "https://crm.example.com/c/{{contact.id}}?token="+mask+"&view=full" {
		t.Errorf("url action: %v", u.Config)
	}
	e.Do("PUT", "/api/custom-actions/"+u.ID, map[string]any{"config": u.Config}, e.manager.Auth()).Expect(t, 200)
	if got := e.stored(t, u.ID).Config.V["url"]; got != "https://crm.example.com/c/{{contact.id}}?token=T-999&view=full" {
		t.Errorf("url action after a round trip: %v", got)
	}
}
