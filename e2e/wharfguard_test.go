package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/infra/phone"
	"wharf/models"
	"wharf/platformsim"
)

// TestBuiltInDocTypesFollowCorePermissions: the integration's built-in
// DocTypes hold the core's data, so the resource API guards them with the
// core's rules. A role (and its API key) without messages:read reads no
// Platform Message through any route or method (list, get, count, value,
// the message-status method, an import into a recipient list) and learns
// nothing from a refusal; writes need the core's write permissions and
// refusals change nothing; with mask_phone_numbers on, numbers and
// phone-like names read exactly as the core API shows them; and the
// webhook verify token (and the tokens) never appear in an answer, only
// has_ flags.
func TestBuiltInDocTypesFollowCorePermissions(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	admin := e.Admin()
	api := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	const verify = "verify-Zq8LrT3k"
	api.data("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "Main", "token": e.WABA.AccessToken,
		"phone_id": e.PhoneNumberID(), "business_id": e.WABA.ID, "app_id": "123", "webhook_verify_token": verify,
		"is_default_outgoing": 1, "is_default_incoming": 1}, 201)
	apptest.Eventually(t, 20*time.Second, "core account active", func() bool {
		var n int64
		e.DB.Raw(`SELECT count(*) FROM platform_accounts WHERE name = 'Main' AND status = ?`, models.AccountActive).Scan(&n)
		return n == 1
	})
	user := "15550003333"
	e.Incoming(platformsim.Incoming{From: user, ProfileName: "Ann", Type: "text", Text: "my order number is 42"})
	var msgs []any
	apptest.Eventually(t, 20*time.Second, "the incoming Platform Message", func() bool {
		msgs, _ = api.do("GET", "/api/resource/Platform%20Message"+q("fields", `["*"]`), nil, 200)["data"].([]any)
		return len(msgs) == 1
	})
	incoming := msgs[0].(map[string]any)
	name, msgID := incoming["name"].(string), incoming["message_id"].(string)
	if incoming["from_number"] != "+"+user {
		t.Fatalf("incoming %v", incoming)
	}
	api.data("POST", "/api/resource/Platform%20Recipient%20List", map[string]any{"list_name": "VIP", "recipients": []map[string]any{
		{"mobile_number": "+15550004444", "recipient_name": "+1 555 000 4444"}, {"mobile_number": "+15550005555", "recipient_name": "Bob"}}}, 201)

	// A role without messages:read, through its session and its API key
	// (Frappe's token and X-API-Key), and a role that runs campaigns but
	// may not read messages.
	e.Do("POST", "/api/roles", map[string]any{"name": "Contacts only", "permissions": []string{"contacts:read", "api_keys:create"}},
		admin.Auth()).Expect(t, 201)
	e.Do("POST", "/api/roles", map[string]any{"name": "Campaigner", "permissions": []string{"campaigns:read", "campaigns:create",
		"campaigns:update"}}, admin.Auth()).Expect(t, 201)
	noMsgs := e.CreateUser(admin.Auth(), "nomsgs@guard.test", "Contacts only")
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, noMsgs.Auth()).Expect(t, 201).Into(t, &key)
	frappeToken := func(r *http.Request) { r.Header.Set("Authorization", "token "+key.ID+":"+key.Key) }
	campaigner := frappeClient{t: t, e: e.Env, auth: e.CreateUser(admin.Auth(), "campaigner@guard.test", "Campaigner").Auth()}
	msgDoc := "/api/resource/Platform%20Message/" + name
	filters := url.QueryEscape(fmt.Sprintf(`[["name","=","%s"]]`, name))
	for who, c := range map[string]frappeClient{"session": {t, e.Env, noMsgs.Auth()}, "token": {t, e.Env, frappeToken},
		"X-API-Key": {t, e.Env, apptest.APIKey(key.Key)}, "campaigner": campaigner} {
		t.Run(who, func(t *testing.T) {
			c.t = t
			const need = "read on Platform Message"
			for _, path := range []string{
				"/api/resource/Platform%20Message",
				"/api/resource/Platform%20Message" + q("fields", `["message"]`, "filters", `[["from_number","like","%555%"]]`),
				msgDoc,
				"/api/method/frappe.client.get_list?doctype=Platform%20Message&fields=" + url.QueryEscape(`["*"]`),
				"/api/method/frappe.client.get_count?doctype=Platform%20Message",
				"/api/method/frappe.client.get_count?doctype=Platform%20Message&filters=" + filters,
				"/api/method/frappe.client.get_value?doctype=Platform%20Message&fieldname=message&filters=" + filters,
				"/api/method/frappe.client.get?doctype=Platform%20Message&name=" + name,
				// Whether an id exists is refused alike: no oracle.
				"/api/method/wharf.api.get_message_status?message_id=" + url.QueryEscape(msgID),
				"/api/method/wharf.api.get_message_status?message_id=wamid.nope",
			} {
				c.refused("GET", path, nil, 403, "PermissionError", need+" for role")
			}
			c.refused("POST", "/api/method/frappe.client.get_list", map[string]any{"doctype": "Platform Message", "fields": []string{"message"}},
				403, "PermissionError", need)
			// Writes: create needs messages:create, change and delete are
			// the Admin's (the core never changes a message).
			c.refused("POST", "/api/resource/Platform%20Message", map[string]any{"to": "+15550009999", "message": "x"}, 403, "PermissionError",
				"create on Platform Message")
			c.refused("PUT", msgDoc, map[string]any{"message": "changed"}, 403, "PermissionError", "write on Platform Message")
			c.refused("DELETE", msgDoc, nil, 403, "PermissionError", "the organization's Admin only")
			c.refused("POST", "/api/method/frappe.client.delete", map[string]any{"doctype": "Platform Message", "name": name}, 403,
				"PermissionError", "delete on Platform Message")
			// Frappe's report, search and export methods are not served at
			// all: no other way in.
			for _, m := range []string{"frappe.desk.reportview.get", "frappe.desk.reportview.get_count", "frappe.desk.search.search_link",
				"frappe.desk.reportview.export_query", "frappe.client.get_single_value", "frappe.desk.form.load.getdoc"} {
				c.refused("GET", "/api/method/"+m+"?doctype=Platform%20Message&txt=5", nil, 404, "DoesNotExistError", "not found")
			}
			// Rows of a child table are only read through their parent.
			c.refused("GET", "/api/resource/Platform%20Bulk%20Recipient", nil, 417, "ValidationError", "child table")
		})
	}
	// The campaigner may build recipient lists, but not from messages it
	// may not read: nothing is created.
	campaigner.refused("POST", "/api/method/wharf.api.import_recipients", map[string]any{"list_name": "From messages",
		"doctype": "Platform Message", "mobile_field": "from_number", "data_fields": []string{"message"}}, 403, "PermissionError",
		"read on Platform Message for role Campaigner (needs the permission messages:read)")
	campaigner.refused("GET", "/api/resource/Platform%20Recipient%20List/From%20messages", nil, 404, "DoesNotExistError", "not found")
	// Nor have a notification copy messages to a number of its choosing.
	campaigner.refused("POST", "/api/resource/Platform%20Notification", map[string]any{"notification_name": "leak",
		"notification_type": "Scheduler Event", "reference_doctype": "Platform Message", "event_frequency": "All", "template": "any",
		"condition": "doc._data_list = [{'phone': '+15550009999', 'm': doc.message}]", "fields": []map[string]any{{"field_name": "m"}}},
		403, "PermissionError", "read on Platform Message for role Campaigner")
	if got := api.data("GET", msgDoc, nil, 200); got["message"] != "my order number is 42" {
		t.Fatalf("refused writes changed the message: %v", got)
	}

	// A Link to a Platform Message carries its name only: no title, no
	// fetched value, and no dotted field reaches through it.
	api.data("POST", doctypes, map[string]any{"name": "Case", "fields": []map[string]any{
		{"fieldname": "title", "fieldtype": "Data"}, {"fieldname": "msg", "fieldtype": "Link", "options": "Platform Message"}},
		"permissions": []map[string]any{{"role": "Campaigner", "read": 1, "create": 1}}}, 201)
	created := campaigner.data("POST", "/api/resource/Case", map[string]any{"title": "t", "msg": name}, 201)
	rows, _ := campaigner.do("GET", "/api/resource/Case"+q("fields", `["*"]`), nil, 200)["data"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["msg"] != name || created["msg"] != name {
		t.Fatalf("case rows %v, created %v", rows, created)
	}
	for _, b := range []string{fmt.Sprint(rows), fmt.Sprint(created)} {
		if strings.Contains(b, "order number") || strings.Contains(b, user) {
			t.Fatalf("a Link carried the message's data: %s", b)
		}
	}
	campaigner.refused("GET", "/api/resource/Case"+q("fields", `["msg.message"]`), nil, 417, "ValidationError", "unknown field")

	// An Agent holds messages:read: it reads them. With mask_phone_numbers
	// on, numbers and phone-like names read as the core API shows them, on
	// every route; what is stored is unchanged.
	agent := frappeClient{t: t, e: e.Env, auth: e.CreateUser(admin.Auth(), "agent@guard.test", "Agent").Auth()}
	if got := agent.data("GET", msgDoc, nil, 200); got["from_number"] != "+"+user {
		t.Fatalf("unmasked agent read %v", got)
	}
	e.Do("PUT", "/api/organizations/settings", map[string]any{"mask_phone_numbers": true}, admin.Auth()).Expect(t, 200)
	var contacts struct {
		Items []struct {
			PhoneNumber string `json:"phone_number"`
		} `json:"items"`
	}
	e.Do("GET", "/api/contacts", nil, agent.auth).Expect(t, 200).Into(t, &contacts)
	if len(contacts.Items) != 1 || contacts.Items[0].PhoneNumber == "+"+user {
		t.Fatalf("core contacts %+v", contacts)
	}
	core := contacts.Items[0].PhoneNumber // the core's own masking of the number
	if core != phone.Mask("+"+user) {
		t.Fatalf("core masks %q as %q", "+"+user, core)
	}
	for _, c := range []frappeClient{agent, api} {
		if got := c.data("GET", msgDoc, nil, 200); got["from_number"] != core || got["message"] != "my order number is 42" {
			t.Errorf("get %v", got)
		}
		for _, path := range []string{
			"/api/resource/Platform%20Message" + q("fields", `["from_number","message"]`),
			// Masked numbers are searched whole only (e2e/wharfmask_test.go).
			"/api/resource/Platform%20Message" + q("fields", `["*"]`, "search_term", "+"+user),
			"/api/method/frappe.client.get_list?doctype=Platform%20Message&fields=" + url.QueryEscape(`["from_number"]`),
		} {
			out := c.do("GET", path, nil, 200)
			rows, _ := out["data"].([]any)
			if rows == nil {
				rows, _ = out["message"].([]any)
			}
			if len(rows) != 1 || rows[0].(map[string]any)["from_number"] != core {
				t.Errorf("%s: %v", path, out)
			}
		}
		v := c.do("GET", "/api/method/frappe.client.get_value?doctype=Platform%20Message&fieldname=from_number&filters="+filters, nil, 200)
		if v["message"].(map[string]any)["from_number"] != core {
			t.Errorf("get_value %v", v)
		}
		if got := c.do("GET", "/api/method/frappe.client.get?doctype=Platform%20Message&name="+name, nil, 200); got["message"].(map[string]any)["from_number"] != core {
			t.Errorf("frappe.client.get %v", got)
		}
	}
	list := api.data("GET", "/api/resource/Platform%20Recipient%20List/VIP", nil, 200)
	recipients := list["recipients"].([]any)
	r0, r1 := recipients[0].(map[string]any), recipients[1].(map[string]any)
	if r0["mobile_number"] != phone.Mask("+15550004444") || r0["recipient_name"] != phone.MaskName("+1 555 000 4444") ||
		r0["recipient_name"] == "+1 555 000 4444" || r1["mobile_number"] != phone.Mask("+15550005555") || r1["recipient_name"] != "Bob" {
		t.Fatalf("masked recipients %v", recipients)
	}
	var stored struct{ From, Mobile string }
	e.DB.Raw(`SELECT (SELECT data ->> 'from_number' FROM docframe_documents WHERE doctype = 'Platform Message') AS "from",
		(SELECT data -> 'recipients' -> 0 ->> 'mobile_number' FROM docframe_documents WHERE doctype = 'Platform Recipient List') AS mobile`).Scan(&stored)
	if stored.From != "+"+user || stored.Mobile != "+15550004444" {
		t.Fatalf("masking changed what is stored: %+v", stored)
	}
	// An import reads the numbers to send to unmasked, and copies the
	// other fields as the caller sees them (no unmasked copy to read back).
	imp := api.do("POST", "/api/method/wharf.api.import_recipients", map[string]any{"list_name": "From messages", "doctype": "Platform Message",
		"mobile_field": "from_number", "data_fields": []string{"from_number", "message"}}, 200)["message"].(map[string]any)
	if fmt.Sprint(imp["count"]) != "1" {
		t.Fatalf("import %v", imp)
	}
	var imported struct{ Mobile, Data string }
	e.DB.Raw(`SELECT data -> 'recipients' -> 0 ->> 'mobile_number' AS mobile, data -> 'recipients' -> 0 ->> 'recipient_data' AS data
		FROM docframe_documents WHERE doctype = 'Platform Recipient List' AND name = 'From messages'`).Scan(&imported)
	if imported.Mobile != "+"+user || strings.Contains(imported.Data, user) || !strings.Contains(imported.Data, core) {
		t.Fatalf("imported %+v", imported)
	}

	// Secrets: never in an answer, whatever is asked; has_ flags say
	// whether they are set. Filtering, ordering or searching on them is
	// refused or finds nothing.
	accounts := "/api/resource/Platform%20Account"
	var bodies []string
	for _, path := range []string{
		accounts + "/Main",
		accounts + q("fields", `["*"]`),
		accounts + q("fields", `["name","has_webhook_verify_token","has_token"]`, "as_dict", "0"),
		"/api/method/frappe.client.get?doctype=Platform%20Account&name=Main",
		"/api/method/frappe.client.get_list?doctype=Platform%20Account&fields=" + url.QueryEscape(`["*"]`),
		accounts + q("search_term", verify),
	} {
		r := e.Do("GET", path, nil, admin.Auth()).Expect(t, 200)
		bodies = append(bodies, string(r.Body))
	}
	bodies = append(bodies, string(e.Do("PUT", accounts+"/Main", map[string]any{"version": "v18.0"}, admin.Auth()).Expect(t, 200).Body))
	for _, b := range bodies {
		if strings.Contains(b, verify) || strings.Contains(b, e.WABA.AccessToken) || strings.Contains(b, `"webhook_verify_token"`) {
			t.Errorf("an answer carries a secret: %s", b)
		}
	}
	if got := api.data("GET", accounts+"/Main", nil, 200); got["has_webhook_verify_token"] != json.Number("1") || got["has_token"] != json.Number("1") {
		t.Errorf("has_ flags %v", got)
	}
	if rows, _ := api.do("GET", accounts+q("search_term", verify), nil, 200)["data"].([]any); len(rows) != 0 {
		t.Errorf("search_term found an account by its verify token: %v", rows)
	}
	for _, path := range []string{
		accounts + q("fields", `["webhook_verify_token"]`),
		accounts + q("filters", `[["webhook_verify_token","like","v%"]]`),
		accounts + q("filters", `{"token": "x"}`),
		accounts + q("order_by", "webhook_verify_token asc"),
		"/api/method/frappe.client.get_value?doctype=Platform%20Account&fieldname=webhook_verify_token&filters=Main",
		"/api/method/frappe.client.get_count?doctype=Platform%20Account&filters=" + url.QueryEscape(`[["webhook_verify_token","=","`+verify+`"]]`),
	} {
		api.refused("GET", path, nil, 417, "ValidationError", "")
	}
	// The account's verify token still works where it is meant to.
	resp, err := http.Get(e.Server.URL + "/api/webhook?hub.mode=subscribe&hub.verify_token=" + verify + "&hub.challenge=c1")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	resp.Body.Close()
}
