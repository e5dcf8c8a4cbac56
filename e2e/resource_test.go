package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
)

// frappeClient speaks the resource API: Frappe's answers, no envelope.
type frappeClient struct {
	t    *testing.T
	e    *apptest.Env
	auth apptest.Auth
}

// do sends a request and decodes the answer, failing unless its status is
// status.
func (c frappeClient) do(method, path string, body any, status int) map[string]any {
	c.t.Helper()
	r := c.e.Do(method, path, body, c.auth)
	if r.Status != status {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, status, r.Body)
	}
	var out map[string]any
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		c.t.Fatalf("%s %s: not JSON: %s", method, path, r.Body)
	}
	return out
}

// refused expects a Frappe error: status, exc_type, and a message in
// exception and _server_messages.
func (c frappeClient) refused(method, path string, body any, status int, exc, msg string) {
	c.t.Helper()
	out := c.do(method, path, body, status)
	if out["exc_type"] != exc {
		c.t.Errorf("%s %s: exc_type %v, want %s (%v)", method, path, out["exc_type"], exc, out["exception"])
	}
	exception, _ := out["exception"].(string)
	if !strings.HasPrefix(exception, "frappe.exceptions."+exc+": ") || !strings.Contains(exception, msg) {
		c.t.Errorf("%s %s: exception %q, want %s containing %q", method, path, exception, exc, msg)
	}
	var list []string
	sm, _ := out["_server_messages"].(string)
	if err := json.Unmarshal([]byte(sm), &list); err != nil || len(list) != 1 {
		c.t.Fatalf("_server_messages %q is not a JSON list of JSON strings", sm)
	}
	var one struct{ Message string }
	if err := json.Unmarshal([]byte(list[0]), &one); err != nil || !strings.Contains(one.Message, msg) {
		c.t.Errorf("_server_messages %q lacks %q", sm, msg)
	}
}

func (c frappeClient) data(method, path string, body any, status int) map[string]any {
	c.t.Helper()
	d, ok := c.do(method, path, body, status)["data"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %s: no data object", method, path)
	}
	return d
}

// names lists a list's rows' field values, joined.
func (c frappeClient) names(path, field string) string {
	c.t.Helper()
	rows, _ := c.do("GET", path, nil, 200)["data"].([]any)
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r.(map[string]any)[field]))
	}
	return strings.Join(out, ",")
}

func q(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}

const (
	orders    = "/api/resource/Sales%20Order"
	customers = "/api/resource/Customer"
	doctypes  = "/api/resource/DocType"
)

// A user-defined submittable DocType with a naming series, a child table, a
// Link and a Password, through the whole resource API: definitions (admin
// only), create, get, list with every operator and both filter forms,
// fields, order_by, paging, search_term, update, submit and cancel, delete,
// each refusal with its status and exc_type, and what is stored.
func TestResourceAPIDocumentLifecycle(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	admin := e.Admin()
	api := frappeClient{t, e, admin.Auth()}
	agentSession := e.CreateUser(admin.Auth(), "agent@frame.test", "Agent")
	agent := frappeClient{t, e, agentSession.Auth()}

	// Defining DocTypes is the Admin's.
	agent.refused("POST", doctypes, map[string]any{"name": "Nope"}, 403, "PermissionError", "Admin role")
	for def, msg := range map[string]string{
		`{"name": "Bad", "fields": [{"fieldname": "a", "fieldtype": "Blob"}]}`:                                          "unknown fieldtype",
		`{"name": "Bad", "fields": [{"fieldname": "modified", "fieldtype": "Data"}]}`:                                   "fieldname modified is reserved",
		`{"name": "Bad", "fields": [{"fieldname": "s", "fieldtype": "Select"}]}`:                                        "a Select needs options",
		`{"name": "Bad", "fields": [{"fieldname": "l", "fieldtype": "Link", "options": "Ghost"}]}`:                      `DocType "Ghost" does not exist`,
		`{"name": "Bad", "fields": [{"fieldname": "a", "fieldtype": "Data"}, {"fieldname": "a", "fieldtype": "Data"}]}`: "more than once",
	} {
		api.refused("POST", doctypes, json.RawMessage(def), 417, "ValidationError", msg)
	}
	api.data("POST", doctypes, map[string]any{"name": "Order Item", "istable": 1, "fields": []map[string]any{
		{"fieldname": "item", "fieldtype": "Data", "reqd": 1}, {"fieldname": "qty", "fieldtype": "Int", "default": "1"}}}, 201)
	api.data("POST", doctypes, map[string]any{"name": "Customer", "autoname": "field:customer_name", "fields": []map[string]any{
		{"fieldname": "customer_name", "fieldtype": "Data", "reqd": 1}, {"fieldname": "email", "fieldtype": "Data", "unique": 1},
		{"fieldname": "api_token", "fieldtype": "Password"}}}, 201)
	api.refused("POST", doctypes, map[string]any{"name": "Bad", "fields": []map[string]any{
		{"fieldname": "t", "fieldtype": "Table", "options": "Customer"}}}, 417, "ValidationError", "is not a child table")
	dt := api.data("POST", doctypes, map[string]any{"name": "Sales Order", "module": "Selling", "is_submittable": 1,
		"autoname": "naming_series:", "naming_series": "SO-.YYYY.-.#####", "title_field": "title", "search_fields": "remarks",
		"fields": []map[string]any{
			{"fieldname": "title", "label": "Title", "fieldtype": "Data", "reqd": 1, "in_list_view": 1},
			{"fieldname": "customer", "label": "Customer", "fieldtype": "Link", "options": "Customer"},
			{"fieldname": "status", "fieldtype": "Select", "options": "Open\nClosed", "default": "Open"},
			{"fieldname": "qty", "fieldtype": "Int", "search_index": 1},
			{"fieldname": "total", "fieldtype": "Currency"},
			{"fieldname": "delivery", "fieldtype": "Date"},
			{"fieldname": "remarks", "fieldtype": "Text"},
			{"fieldname": "items", "fieldtype": "Table", "options": "Order Item"},
		}}, 201)
	if dt["doctype"] != "DocType" || dt["custom"] != json.Number("1") || dt["is_submittable"] != json.Number("1") {
		t.Fatalf("DocType answer %v", dt)
	}
	fields := dt["fields"].([]any)
	if f := fields[1].(map[string]any); f["doctype"] != "DocField" || f["parent"] != "Sales Order" || f["idx"] != json.Number("2") || f["fieldname"] != "customer" {
		t.Fatalf("DocField row %v", f)
	}
	got := api.data("GET", doctypes+"/Sales%20Order", nil, 200)
	if got["name"] != "Sales Order" || len(got["fields"].([]any)) != 8 {
		t.Fatalf("GET DocType %v", got)
	}
	if list := api.names(doctypes+q("filters", `[["is_submittable", "=", 1]]`), "name"); list != "Sales Order" {
		t.Fatalf("DocType list %q", list)
	}
	agent.refused("PUT", doctypes+"/Customer", map[string]any{"module": "X"}, 403, "PermissionError", "Admin role")
	agent.refused("DELETE", doctypes+"/Customer", nil, 403, "PermissionError", "Admin role")

	// Customers: a unique field, a Password masked everywhere.
	c := api.data("POST", customers, map[string]any{"customer_name": "Acme", "email": "ops@acme.test", "api_token": "tok-123"}, 201)
	if c["name"] != "Acme" || c["api_token"] != "*****" || c["id"] != "Acme" {
		t.Fatalf("customer %v", c)
	}
	api.refused("POST", customers, map[string]any{"customer_name": "Other", "email": "ops@acme.test"}, 409, "DuplicateEntryError", "must be unique")
	api.refused("POST", customers, map[string]any{"customer_name": "Acme"}, 409, "DuplicateEntryError", "Customer Acme already exists")
	api.data("POST", customers, map[string]any{"data": map[string]any{"customer_name": "Globex"}}, 201) // Frappe's {"data": {...}}
	if got := api.data("GET", customers+"/Acme", nil, 200); got["api_token"] != "*****" {
		t.Fatalf("get shows %v", got["api_token"])
	}
	rows := api.do("GET", customers+q("fields", `["*"]`, "filters", `{"name": "Acme"}`), nil, 200)["data"].([]any)
	if r := rows[0].(map[string]any); r["api_token"] != "*****" || r["email"] != "ops@acme.test" {
		t.Fatalf("list row %v", r)
	}
	if u := api.data("PUT", customers+"/Acme", map[string]any{"api_token": "*****", "email": "new@acme.test"}, 200); u["api_token"] != "*****" {
		t.Fatalf("PUT answer %v", u)
	}
	orgID := uuid.MustParse(admin.User.OrganizationID)
	if secret, err := e.API.Services.Frame.GetPassword(context.Background(), orgID, "Customer", "Acme", "api_token"); err != nil || secret != "tok-123" {
		t.Fatalf("the masked PUT changed the secret: %q %v", secret, err)
	}
	var stored string
	e.DB.Raw(`SELECT data::text || secrets::text FROM docframe_documents WHERE doctype = 'Customer' AND name = 'Acme'`).Scan(&stored)
	if strings.Contains(stored, "tok-123") {
		t.Fatalf("stored in clear: %s", stored)
	}

	// Sales orders: series names, coercion, child rows.
	year := time.Now().UTC().Format("2006")
	type order struct {
		title, status, delivery, remarks string
		qty                              int
		total                            float64
	}
	for _, o := range []order{
		{"Alpha", "Open", "2026-03-01", "rush", 5, 10.5},
		{"Bravo", "Closed", "2026-03-02", "", 10, 20},
		{"Charlie", "Open", "2026-03-03", "gift wrap", 15, 30.25},
		{"Delta", "Closed", "2026-03-04", "", 20, 40},
		{"Echo", "Open", "2026-03-05", "call first", 25, 50},
	} {
		body := map[string]any{"title": o.title, "customer": "Acme", "status": o.status, "qty": fmt.Sprint(o.qty), "total": o.total,
			"delivery": o.delivery, "items": []map[string]any{{"item": "Widget", "qty": 2}, {"item": "Gadget"}}}
		if o.remarks != "" {
			body["remarks"] = o.remarks
		}
		api.data("POST", orders, body, 201)
	}
	first := api.data("GET", orders+"/SO-"+year+"-00001", nil, 200)
	if first["name"] != "SO-"+year+"-00001" || first["id"] != first["name"] || first["qty"] != json.Number("5") || first["docstatus"] != json.Number("0") ||
		first["owner"] != apptest.AdminEmail || first["doctype"] != "Sales Order" || first["status"] != "Open" {
		t.Fatalf("first order %v", first)
	}
	if _, err := time.Parse("2006-01-02 15:04:05", first["modified"].(string)); err != nil {
		t.Fatalf("modified %v: %v", first["modified"], err)
	}
	items := first["items"].([]any)
	row := items[1].(map[string]any)
	if len(items) != 2 || row["idx"] != json.Number("2") || row["parent"] != first["name"] || row["parenttype"] != "Sales Order" ||
		row["parentfield"] != "items" || row["doctype"] != "Order Item" || row["qty"] != json.Number("1") || row["name"] == "" {
		t.Fatalf("child rows %v", items)
	}

	// Refused documents: 417 with their exception types, nothing stored.
	for body, want := range map[string][2]string{
		`{"customer": "Acme"}`:                    {"MandatoryError", "Value missing for Sales Order: Title (title)"},
		`{"title": "x", "status": "Lost"}`:        {"ValidationError", `status cannot be "Lost"`},
		`{"title": "x", "qty": "lots"}`:           {"ValidationError", `qty must be a whole number, not "lots"`},
		`{"title": "x", "delivery": "next week"}`: {"ValidationError", "delivery must be a date"},
		`{"title": "x", "customer": "Initech"}`:   {"LinkValidationError", `Could not find Customer (customer): "Initech"`},
		`{"title": "x", "items": [{"qty": 1}]}`:   {"MandatoryError", "Value missing for Order Item: item"},
	} {
		api.refused("POST", orders, json.RawMessage(body), 417, want[0], want[1])
	}
	api.refused("POST", orders, "not json", 417, "ValidationError", "request body must be a JSON object")
	if n := countDocs(e, "Sales Order"); n != 5 {
		t.Fatalf("%d orders stored, want 5", n)
	}

	// Lists: name only by default, fields, every operator in both forms.
	if r := api.do("GET", orders, nil, 200)["data"].([]any)[0].(map[string]any); len(r) != 1 || r["name"] == nil {
		t.Fatalf("default row %v", r)
	}
	list := func(filters string) string {
		t.Helper()
		return api.names(orders+q("fields", `["title"]`, "filters", filters, "order_by", "qty asc"), "title")
	}
	for filters, want := range map[string]string{
		`[["qty", "=", 10]]`:                                      "Bravo",
		`[["qty", "!=", 10]]`:                                     "Alpha,Charlie,Delta,Echo",
		`[["qty", ">", 15]]`:                                      "Delta,Echo",
		`[["qty", ">=", "15"]]`:                                   "Charlie,Delta,Echo",
		`[["qty", "<", 15]]`:                                      "Alpha,Bravo",
		`[["qty", "<=", 15]]`:                                     "Alpha,Bravo,Charlie",
		`[["title", "like", "ha"]]`:                               "Alpha,Charlie",
		`[["title", "like", "%lta"]]`:                             "Delta",
		`[["title", "not like", "ha"]]`:                           "Bravo,Delta,Echo",
		`[["status", "in", ["Closed"]]]`:                          "Bravo,Delta",
		`[["title", "in", "Alpha, Echo"]]`:                        "Alpha,Echo",
		`[["title", "not in", ["Alpha", "Echo"]]]`:                "Bravo,Charlie,Delta",
		`[["delivery", "between", ["2026-03-02", "2026-03-04"]]]`: "Bravo,Charlie,Delta",
		`[["remarks", "is", null]]`:                               "Bravo,Delta",
		`[["remarks", "is", "set"]]`:                              "Alpha,Charlie,Echo",
		`[["remarks", "is not", null]]`:                           "Alpha,Charlie,Echo",
		`[["Sales Order", "total", ">", 30]]`:                     "Charlie,Delta,Echo",
		`{"status": "Open"}`:                                      "Alpha,Charlie,Echo",
		`{"status": "Open", "qty": [">", 5]}`:                     "Charlie,Echo",
		`{"qty": ["between", [10, 20]]}`:                          "Bravo,Charlie,Delta",
	} {
		if got := list(filters); got != want {
			t.Errorf("filters %s: %q, want %q", filters, got, want)
		}
	}
	if got := api.names(orders+q("fields", "title,qty", "or_filters", `[["qty", "=", 5], ["qty", "=", 25]]`, "order_by", "qty desc"), "title"); got != "Echo,Alpha" {
		t.Errorf("or_filters %q", got)
	}
	if got := api.names(orders+q("fields", `["title"]`, "order_by", "qty desc", "limit", "2", "offset", "1"), "title"); got != "Delta,Charlie" {
		t.Errorf("limit/offset %q", got)
	}
	if got := api.names(orders+q("fields", `["title"]`, "order_by", "qty asc", "limit_page_length", "2", "limit_start", "2"), "title"); got != "Charlie,Delta" {
		t.Errorf("limit_page_length/limit_start %q", got)
	}
	if got := api.names(orders+q("fields", `["title"]`, "search_term", "GIFT"), "title"); got != "Charlie" {
		t.Errorf("search_term in search_fields %q", got)
	}
	if got := api.names(orders+q("fields", `["title"]`, "search_term", "brav"), "title"); got != "Bravo" {
		t.Errorf("search_term in the title %q", got)
	}
	all := api.do("GET", orders+q("fields", `["*"]`, "limit", "1", "order_by", "qty asc"), nil, 200)["data"].([]any)[0].(map[string]any)
	if all["title"] != "Alpha" || all["total"] != json.Number("10.5") || all["creation"] == nil || all["items"] != nil {
		t.Errorf(`fields ["*"] row %v`, all)
	}
	for query, msg := range map[string]string{
		q("filters", `[["ghost", "=", 1]]`): `unknown field "ghost"`,
		q("filters", `[["qty", "~~", 1]]`):  `unknown operator "~~"`,
		q("filters", `qty=1`):               "filters must be JSON",
		q("fields", `["title", "1; drop"]`): "unknown field",
		q("order_by", "qty; drop table x"):  "must be \"field [asc|desc]\"",
		q("order_by", "ghost desc"):         `unknown field "ghost"`,
		q("limit", "-3"):                    "limit must be a whole number",
		q("limit", "5000"):                  "limit must be at most 1000",
	} {
		api.refused("GET", orders+query, nil, 417, "ValidationError", msg)
	}
	api.refused("GET", "/api/resource/Ghost", nil, 404, "DoesNotExistError", "DocType Ghost not found")
	api.refused("GET", orders+"/SO-1999-00001", nil, 404, "DoesNotExistError", "not found")

	// Update, submit, cancel, delete.
	name := "SO-" + year + "-00002"
	u := api.data("PUT", orders+"/"+name, map[string]any{"qty": 11, "items": []map[string]any{{"item": "Only"}}}, 200)
	if u["qty"] != json.Number("11") || u["title"] != "Bravo" || len(u["items"].([]any)) != 1 {
		t.Fatalf("PUT %v", u)
	}
	api.refused("PUT", orders+"/"+name, map[string]any{"status": "Maybe"}, 417, "ValidationError", `status cannot be "Maybe"`)
	if s := api.data("POST", orders+"/"+name+"/submit", nil, 200); s["docstatus"] != json.Number("1") {
		t.Fatalf("submit %v", s["docstatus"])
	}
	api.refused("PUT", orders+"/"+name, map[string]any{"qty": 1}, 417, "UpdateAfterSubmitError", "is submitted")
	api.refused("DELETE", orders+"/"+name, nil, 417, "DocstatusTransitionError", "cancel it before deleting")
	api.refused("POST", orders+"/"+name+"/submit", nil, 417, "DocstatusTransitionError", "already submitted")
	if s := api.data("POST", orders+"/"+name+"/cancel", nil, 200); s["docstatus"] != json.Number("2") {
		t.Fatalf("cancel %v", s["docstatus"])
	}
	api.refused("POST", orders+"/"+name+"/cancel", nil, 417, "DocstatusTransitionError", "already cancelled")
	api.refused("PUT", orders+"/"+name, map[string]any{"qty": 1}, 417, "UpdateAfterSubmitError", "is cancelled")
	api.refused("POST", customers+"/Acme/submit", nil, 417, "DocstatusTransitionError", "Customer is not submittable")
	api.refused("POST", orders+"/SO-"+year+"-00003/cancel", nil, 417, "DocstatusTransitionError", "not submitted")
	api.refused("DELETE", customers+"/Acme", nil, 417, "LinkExistsError", "linked with Sales Order")
	api.refused("POST", orders+"/"+name, map[string]any{"run_method": "explode"}, 403, "PermissionError", "not whitelisted")
	if out := api.do("DELETE", orders+"/"+name, nil, 200); out["message"] != "ok" {
		t.Fatalf("DELETE %v", out)
	}
	if countDocs(e, "Sales Order") != 4 {
		t.Fatal("the cancelled order was not deleted")
	}
	api.refused("DELETE", doctypes+"/Sales%20Order", nil, 417, "LinkExistsError", "has documents")

	// Methods: get_count, get_logged_user, and an unknown one.
	if out := api.do("GET", "/api/method/frappe.client.get_count"+q("doctype", "Sales Order", "filters", `[["status", "=", "Open"]]`), nil, 200); out["message"] != json.Number("3") {
		t.Fatalf("get_count %v", out)
	}
	if out := api.do("GET", "/api/method/frappe.auth.get_logged_user", nil, 200); out["message"] != apptest.AdminEmail {
		t.Fatalf("get_logged_user %v", out)
	}
	api.refused("POST", "/api/method/wharf.nothing", map[string]any{}, 404, "DoesNotExistError", "not whitelisted")
	gl := api.do("POST", "/api/method/frappe.client.get_list", map[string]any{"doctype": "Sales Order", "fields": []string{"title", "qty"},
		"filters": map[string]any{"qty": []any{">=", 20}}, "order_by": "qty desc"}, 200)["message"].([]any)
	if len(gl) != 2 || gl[0].(map[string]any)["title"] != "Echo" {
		t.Fatalf("get_list %v", gl)
	}
	if v := api.do("GET", "/api/method/frappe.client.get_value"+q("doctype", "Customer", "fieldname", "email", "filters", "Acme"), nil, 200); v["message"].(map[string]any)["email"] != "new@acme.test" {
		t.Fatalf("get_value %v", v)
	}
	asList := api.do("GET", orders+q("fields", `["title","qty"]`, "as_dict", "0", "order_by", "qty asc", "limit", "1"), nil, 200)["data"].([]any)
	if r := asList[0].([]any); len(r) != 2 || r[0] != "Alpha" || r[1] != json.Number("5") {
		t.Fatalf("as_dict=0 rows %v", asList)
	}

	// Permissions: without DocPerms, Agent reads and nothing more; a DocPerm
	// granting create lets the agent create, still not delete.
	if got := agent.names(orders+q("fields", `["title"]`, "order_by", "qty asc", "limit", "1"), "title"); got != "Alpha" {
		t.Fatalf("agent reads %q", got)
	}
	agent.refused("POST", orders, map[string]any{"title": "by agent"}, 403, "PermissionError", "create on Sales Order for role Agent")
	agent.refused("PUT", orders+"/SO-"+year+"-00001", map[string]any{"qty": 1}, 403, "PermissionError", "write")
	api.data("PUT", doctypes+"/Sales%20Order", map[string]any{"permissions": []map[string]any{
		{"role": "Admin", "read": 1, "write": 1, "create": 1, "delete": 1, "submit": 1, "cancel": 1},
		{"role": "Agent", "read": 1, "create": 1}}}, 200)
	byAgent := agent.data("POST", orders, map[string]any{"title": "by agent"}, 201)
	if byAgent["owner"] != "agent@frame.test" {
		t.Fatalf("owner %v", byAgent["owner"])
	}
	agent.refused("DELETE", orders+"/"+byAgent["name"].(string), nil, 403, "PermissionError", "delete")

	// Another organization sees nothing of it.
	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, admin.Auth()).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, admin.Auth()).Expect(t, 200).Into(t, &inB)
	other := frappeClient{t, e, e.CreateUser(inB.Auth(), "b@frame.test", "Admin").Auth()}
	other.refused("GET", orders+"/SO-"+year+"-00001", nil, 404, "DoesNotExistError", "not found")
	other.refused("GET", orders, nil, 404, "DoesNotExistError", "not found")
	other.refused("PUT", customers+"/Acme", map[string]any{"email": "x@y.z"}, 404, "DoesNotExistError", "not found")
	other.refused("DELETE", doctypes+"/Customer", nil, 404, "DoesNotExistError", "not found")
	if got := other.names(doctypes, "name"); got != "" {
		t.Fatalf("org B lists DocTypes %q", got)
	}
}

func countDocs(e *apptest.Env, doctype string) int64 {
	var n int64
	e.DB.Raw(`SELECT count(*) FROM docframe_documents WHERE doctype = ?`, doctype).Scan(&n)
	return n
}

// Frappe's "Authorization: token <api_key>:<api_secret>": the API key's id
// and the key, with or without its prefix; a wrong secret, a wrong id, an
// expired key and a malformed header are 401 AuthenticationError; repeated
// failures from one address for one key are locked out (429).
func TestResourceAPITokenAuthentication(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	admin := e.Admin()
	api := frappeClient{t, e, admin.Auth()}
	api.data("POST", doctypes, map[string]any{"name": "Note", "fields": []map[string]any{{"fieldname": "body", "fieldtype": "Text"}}}, 201)
	api.data("POST", "/api/resource/Note", map[string]any{"body": "hello"}, 201)
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	e.Do("POST", "/api/api-keys", map[string]any{"name": "frappe"}, admin.Auth()).Expect(t, 201).Into(t, &key)
	token := func(v string) apptest.Auth {
		return func(r *http.Request) { r.Header.Set("Authorization", v) }
	}
	for _, secret := range []string{key.Key, strings.TrimPrefix(key.Key, "whm_")} {
		c := frappeClient{t, e, token("token " + key.ID + ":" + secret)}
		if got := c.names("/api/resource/Note"+q("fields", `["body"]`), "body"); got != "hello" {
			t.Fatalf("token auth lists %q", got)
		}
		if out := c.do("GET", "/api/method/frappe.auth.get_logged_user", nil, 200); out["message"] != apptest.AdminEmail {
			t.Fatalf("token acts as %v", out["message"])
		}
	}
	other := uuid.NewString()
	for _, h := range []string{
		"token " + key.ID + ":whm_" + strings.Repeat("0", 32), // wrong secret
		"token " + other + ":" + key.Key,                      // wrong id
		"token " + key.ID,                                     // no secret
		"token not-a-uuid:" + key.Key,
	} {
		c := frappeClient{t, e, token(h)}
		c.refused("GET", "/api/resource/Note", nil, 401, "AuthenticationError", "")
	}
	// The core's credentials work too: X-API-Key.
	if got := (frappeClient{t, e, apptest.APIKey(key.Key)}).names("/api/resource/Note", "name"); got == "" {
		t.Fatal("X-API-Key lists nothing")
	}
	// An expired key.
	e.DB.Exec(`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = ?`, key.ID)
	frappeClient{t, e, token("token " + key.ID + ":" + key.Key)}.refused("GET", "/api/resource/Note", nil, 401, "AuthenticationError", "expired")

	// Ten failures for one key id from one address lock that pair out.
	var last int
	for range 12 {
		last = e.Do("GET", "/api/resource/Note", nil, token("token "+other+":"+key.Key)).Status
	}
	if last != 429 {
		t.Fatalf("after 12 failures: %d, want 429", last)
	}
}
