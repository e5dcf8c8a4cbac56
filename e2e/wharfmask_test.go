package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/internal/infra/phone"
	"wharf/models"
	"wharf/platformsim"
)

// TestMaskedNumbersCannotBeFoundPiecewise: with mask_phone_numbers on, the
// resource API compares the built-in DocTypes' masked numbers only whole,
// as the core's searches do (docs/FRAMEWORK.md, "Built-in DocTypes follow
// the core's rules"). Through a session and an API key alike, every form
// that would tell masked digits apart (a fragment, a pattern, a range, an
// order, or_filters, get_count, get_list, get_value, a child table's
// number, group_by, an aggregate, a flood of candidates) is a 417 whose
// answer is the same whether the fragment is part of a stored number or
// not; a search_term fragment finds nothing; the whole number, however
// written, still finds its document. With masking off every form works as
// before.
func TestMaskedNumbersCannotBeFoundPiecewise(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	admin := e.Admin()
	api := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	api.data("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "Main", "token": e.WABA.AccessToken,
		"phone_id": e.PhoneNumberID(), "business_id": e.WABA.ID, "app_id": "123", "webhook_verify_token": "verify-mask",
		"is_default_outgoing": 1, "is_default_incoming": 1}, 201)
	apptest.Eventually(t, 20*time.Second, "core account active", func() bool {
		var n int64
		e.DB.Raw(`SELECT count(*) FROM platform_accounts WHERE name = 'Main' AND status = ?`, models.AccountActive).Scan(&n)
		return n == 1
	})
	const ann, bob = "15550003333", "15550007777"
	e.Incoming(platformsim.Incoming{From: ann, ProfileName: "Ann", Type: "text", Text: "from ann"})
	e.Incoming(platformsim.Incoming{From: bob, ProfileName: "Bob", Type: "text", Text: "from bob"})
	messages := "/api/resource/Platform%20Message"
	nameOf := map[string]string{} // message text -> document name
	apptest.Eventually(t, 30*time.Second, "both incoming Platform Messages", func() bool {
		rows, _ := api.do("GET", messages+q("fields", `["name","message"]`), nil, 200)["data"].([]any)
		for _, r := range rows {
			m := r.(map[string]any)
			nameOf[m["message"].(string)] = m["name"].(string)
		}
		return len(rows) == 2
	})
	annDoc, bobDoc := nameOf["from ann"], nameOf["from bob"]
	api.data("POST", "/api/resource/Platform%20Recipient%20List", map[string]any{"list_name": "VIP", "recipients": []map[string]any{
		{"mobile_number": "+15550004444", "recipient_name": "+1 555 000 4444"}}}, 201)

	// A role that reads messages and campaigns, through its session and
	// its API key (Frappe's token).
	e.Do("POST", "/api/roles", map[string]any{"name": "Reader", "permissions": []string{"messages:read", "campaigns:read",
		"campaigns:create", "campaigns:update", "api_keys:create"}}, admin.Auth()).Expect(t, 201)
	reader := e.CreateUser(admin.Auth(), "reader@mask.test", "Reader")
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, reader.Auth()).Expect(t, 201).Into(t, &key)
	clients := map[string]frappeClient{
		"session": {t: t, e: e.Env, auth: reader.Auth()},
		"token":   {t: t, e: e.Env, auth: func(r *http.Request) { r.Header.Set("Authorization", "token "+key.ID+":"+key.Key) }},
	}
	setMasking := func(on bool) {
		e.Do("PUT", "/api/organizations/settings", map[string]any{"mask_phone_numbers": on}, admin.Auth()).Expect(t, 200)
	}

	// Each form, given a fragment of a number: the request, and what its
	// refusal says.
	enc := url.QueryEscape
	getCount := "/api/method/frappe.client.get_count?doctype=Platform%20Message&filters="
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = fmt.Sprintf(`"+1555000%04d"`, i)
	}
	type form struct {
		method, path string
		body         any
		msg          string
	}
	masked := "from_number is masked (mask_phone_numbers)"
	forms := map[string]func(frag string) form{
		"fragment like": func(frag string) form {
			return form{"GET", messages + q("filters", `[["from_number","like","%`+frag+`%"]]`), nil, masked + ": like would reveal masked digits"}
		},
		"object not like": func(frag string) form {
			return form{"GET", messages + q("filters", `{"from_number":["not like","%`+frag+`%"]}`), nil, masked + ": not like"}
		},
		"fragment equality": func(frag string) form {
			return form{"GET", messages + q("filters", `[["from_number","=","`+frag+`"]]`), nil, masked + ": it is compared only with a whole phone number"}
		},
		"range": func(frag string) form {
			return form{"GET", messages + q("filters", `[["from_number",">=","+1555`+frag+`"]]`), nil, masked + ": >= would reveal"}
		},
		"between": func(frag string) form {
			return form{"GET", messages + q("filters", `[["from_number","between",["+1555`+frag+`","+1556"]]]`), nil, masked + ": between"}
		},
		"or_filters": func(frag string) form {
			return form{"GET", messages + q("or_filters", `[["name","=","none"],["from_number","like","`+frag+`%"]]`), nil, masked}
		},
		"qualified field": func(frag string) form {
			return form{"GET", messages + q("filters", `[["Platform Message","tabPlatform Message.from_number","<","+1555`+frag+`"]]`), nil, masked}
		},
		"order_by": func(string) form {
			return form{"GET", messages + q("order_by", "from_number asc"), nil, masked + ": lists cannot be ordered by it"}
		},
		"get_count": func(frag string) form {
			return form{"GET", getCount + enc(`[["from_number","like","%`+frag+`%"]]`), nil, masked}
		},
		"get_count or_filters": func(frag string) form {
			return form{"GET", "/api/method/frappe.client.get_count?doctype=Platform%20Message&or_filters=" +
				enc(`[["from_number",">","+1555`+frag+`"]]`), nil, masked}
		},
		"get_list": func(frag string) form {
			return form{"POST", "/api/method/frappe.client.get_list", map[string]any{"doctype": "Platform Message",
				"filters": [][]string{{"from_number", "like", "%" + frag + "%"}}}, masked}
		},
		"get_list order_by": func(string) form {
			return form{"POST", "/api/method/frappe.client.get_list", map[string]any{"doctype": "Platform Message",
				"order_by": "from_number desc"}, masked}
		},
		"get_value": func(frag string) form {
			return form{"GET", "/api/method/frappe.client.get_value?doctype=Platform%20Message&fieldname=message&filters=" +
				enc(`{"from_number":["like","%`+frag+`%"]}`), nil, masked}
		},
		"child table number": func(frag string) form {
			return form{"GET", "/api/resource/Platform%20Recipient%20List" + q("filters",
				`[["Platform Bulk Recipient","mobile_number","like","%`+frag+`%"]]`), nil, "child table filters are not supported"}
		},
		"child table qualified": func(frag string) form {
			return form{"GET", "/api/resource/Platform%20Recipient%20List" + q("filters",
				"[[\"`tabPlatform Bulk Recipient`.`mobile_number`\",\"like\",\"%"+frag+"%\"]]"), nil, "child table fields are not supported"}
		},
		"group_by": func(frag string) form {
			return form{"GET", messages + q("group_by", "from_number", "filters", `[["message","like","%`+frag+`%"]]`), nil,
				"group_by is not supported"}
		},
		"aggregate": func(frag string) form {
			return form{"GET", messages + q("fields", `["count(from_number)"]`, "filters", `[["message","like","%`+frag+`%"]]`), nil,
				"unknown field"}
		},
		"eleven candidates": func(frag string) form {
			return form{"GET", messages + q("filters", `[["from_number","in",[`+strings.Join(eleven, ",")+`]]]`,
				"search_term", frag), nil, "at most 10 whole numbers in one request"}
		},
	}
	// A fragment of Ann's number, and one of no number: the answers must
	// not differ but for the fragment itself.
	const hit, miss = "0003333", "0009191"
	setMasking(true)
	for who, c := range clients {
		t.Run(who, func(t *testing.T) {
			c.t = t
			for name, mk := range forms {
				f := mk(hit)
				c.refused(f.method, f.path, f.body, 417, "ValidationError", f.msg)
				bodies := make([]string, 2)
				for i, frag := range []string{hit, miss} {
					f := mk(frag)
					r := e.Do(f.method, f.path, f.body, c.auth)
					bodies[i] = strings.ReplaceAll(string(r.Body), frag, "FRAG")
				}
				if bodies[0] != bodies[1] {
					t.Errorf("%s: a fragment of a stored number is answered differently from one of none:\n%s\n%s", name, bodies[0], bodies[1])
				}
				for _, b := range bodies {
					if strings.Contains(b, ann) || strings.Contains(b, "4444") {
						t.Errorf("%s: a refusal carries a stored number: %s", name, b)
					}
				}
			}
			// search_term: a fragment matches no masked number (nothing
			// found, as with a fragment of none).
			for _, frag := range []string{hit, "000 3333", "+1555000333"} {
				if got := c.names(messages+q("search_term", frag), "name"); got != "" {
					t.Errorf("search_term %q found %s", frag, got)
				}
			}

			// The whole number, however written, finds its document (and
			// answers it masked).
			core := phone.Mask("+" + ann)
			for _, path := range []string{
				messages + q("fields", `["name","from_number"]`, "filters", `[["from_number","=","+1 (555) 000-3333"]]`),
				messages + q("fields", `["name","from_number"]`, "filters", `{"from_number":"15550003333"}`),
				messages + q("fields", `["name","from_number"]`, "search_term", "+1 555 000 3333"),
				messages + q("fields", `["name","from_number"]`, "or_filters", `[["from_number","=","+15550003333"],["name","=","none"]]`),
				messages + q("fields", `["name","from_number"]`, "filters", `[["from_number","in",["0015550003333","+15550000000"]]]`),
				messages + q("fields", `["name","from_number"]`, "filters", `[["from_number","not in",["+15550007777"]]]`),
			} {
				rows, _ := c.do("GET", path, nil, 200)["data"].([]any)
				if len(rows) != 1 || rows[0].(map[string]any)["name"] != annDoc || rows[0].(map[string]any)["from_number"] != core {
					t.Errorf("%s: %v, want %s with %s", path, rows, annDoc, core)
				}
			}
			if got := c.names(messages+q("filters", `[["from_number","is","set"]]`, "order_by", "name asc"), "name"); got != sorted(annDoc, bobDoc) {
				t.Errorf("is set: %s", got)
			}
			if n := c.do("GET", getCount+enc(`[["from_number","=","+1 555 000 3333"]]`), nil, 200)["message"]; fmt.Sprint(n) != "1" {
				t.Errorf("get_count of the whole number: %v", n)
			}
			v := c.do("GET", "/api/method/frappe.client.get_value?doctype=Platform%20Message&fieldname=message&filters="+
				enc(`{"from_number":"+15550007777"}`), nil, 200)["message"].(map[string]any)
			if v["message"] != "from bob" {
				t.Errorf("get_value of the whole number: %v", v)
			}
			got := c.do("POST", "/api/method/frappe.client.get_list", map[string]any{"doctype": "Platform Message", "fields": []string{"name"},
				"filters": map[string]any{"from_number": "+15550007777"}}, 200)["message"].([]any)
			if len(got) != 1 || got[0].(map[string]any)["name"] != bobDoc {
				t.Errorf("get_list of the whole number: %v", got)
			}
		})
	}
	// An import into a recipient list filtered by a whole number written
	// as people write it reads that message's number (the unmasked read
	// joins the caller's page by name).
	imp := clients["session"].do("POST", "/api/method/wharf.api.import_recipients", map[string]any{"list_name": "Ann only",
		"doctype": "Platform Message", "mobile_field": "from_number", "filters": `[["from_number","=","+1 (555) 000-3333"]]`}, 200)
	if m := imp["message"].(map[string]any); fmt.Sprintf("%v %v", m["count"], m["skipped"]) != "1 0" {
		t.Fatalf("import %v", imp)
	}
	var imported string
	e.DB.Raw(`SELECT data -> 'recipients' -> 0 ->> 'mobile_number' FROM docframe_documents WHERE name = 'Ann only'`).Scan(&imported)
	if imported != "+"+ann {
		t.Fatalf("imported %q", imported)
	}
	clients["session"].refused("POST", "/api/method/wharf.api.import_recipients", map[string]any{"list_name": "Piecewise",
		"doctype": "Platform Message", "mobile_field": "from_number", "filters": `[["from_number","like","%3333"]]`}, 417,
		"ValidationError", masked)
	api.refused("GET", "/api/resource/Platform%20Recipient%20List/Piecewise", nil, 404, "DoesNotExistError", "not found")

	// Masking off: the fragment, the range and the order work as before.
	setMasking(false)
	c := clients["token"]
	if got := c.names(messages+q("filters", `[["from_number","like","%`+hit+`%"]]`), "name"); got != annDoc {
		t.Errorf("unmasked fragment like: %s", got)
	}
	if got := c.names(messages+q("search_term", hit), "name"); got != annDoc {
		t.Errorf("unmasked search_term fragment: %s", got)
	}
	if got := c.names(messages+q("filters", `[["from_number",">=","+155500050"]]`), "name"); got != bobDoc {
		t.Errorf("unmasked range: %s", got)
	}
	if got := c.names(messages+q("order_by", "from_number desc"), "name"); got != bobDoc+","+annDoc {
		t.Errorf("unmasked order_by: %s", got)
	}
	if n := c.do("GET", getCount+enc(`[["from_number","like","%`+hit+`%"]]`), nil, 200)["message"]; fmt.Sprint(n) != "1" {
		t.Errorf("unmasked get_count of a fragment: %v", n)
	}
	rows, _ := c.do("GET", messages+q("fields", `["from_number"]`, "filters", `[["from_number","like","%`+hit+`%"]]`), nil, 200)["data"].([]any)
	if len(rows) != 1 || rows[0].(map[string]any)["from_number"] != "+"+ann {
		t.Errorf("unmasked answer %v", rows)
	}
}

// sorted joins names in order, as a list ordered by name answers them.
func sorted(names ...string) string {
	slices.Sort(names)
	return strings.Join(names, ",")
}
