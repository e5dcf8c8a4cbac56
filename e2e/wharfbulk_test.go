package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// A bulk message of 500 recipients is a campaign underneath: a draft sends
// nothing, the submit queues it, every recipient gets one message, one
// provider failure (131026) leaves it Partially Failed with exact counts,
// retry_failed resends that recipient once and it ends Completed; Common
// and Unique variables reach the provider; recipient lists import from a
// DocType with filters and data fields; a scheduled one waits for its
// time; another organization and an Agent are refused.
func TestBulkMessagesAreCampaignsUnderneath(t *testing.T) {
	failing := "15558000123"
	f := newFixture(t, nil, func(c *platformsim.Config) {
		c.ThroughputPerSecond = -1
		c.FailRecipients = map[string]int{failing: 131026}
	})
	f.DB.Exec(`UPDATE platform_accounts SET messaging_tier_override = 'TIER_UNLIMITED'`)
	f.StartWorker()
	f.StartScheduler()
	seeded := f.SeedTemplate(f.orgID, f.accountID, "bulk_hello", "Hello {{1}}, your code is {{2}}", false)
	// The integration's DocTypes are created on first use; the bulk
	// messages' with the base's they link to.
	if err := f.API.Services.Bulk.EnsureDocTypes(context.Background(), uuid.MustParse(f.orgID)); err != nil {
		t.Fatal(err)
	}
	api := frappeClient{t, f.SimEnv.Env, f.admin.Auth()}
	// template is a Link to a Platform Template: the core template's mirror.
	hello := mirrorTemplate(api, seeded, "Hello {{1}}, your code is {{2}}")
	api.refused("POST", "/api/resource/Platform%20Bulk%20Message", map[string]any{"title": "t", "template": "bulk_hello",
		"recipients": []map[string]any{{"mobile_number": "+15558000001"}}}, 417, "LinkValidationError", "bulk_hello")
	api.refused("POST", "/api/resource/Platform%20Bulk%20Message", map[string]any{"title": "t", "template": hello, "platform_account": "Nope",
		"recipients": []map[string]any{{"mobile_number": "+15558000001"}}}, 417, "LinkValidationError", "Nope")
	const bulks = "/api/resource/Platform%20Bulk%20Message"
	sends := func() map[string]int {
		out := map[string]int{}
		for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
			out[m.To]++
		}
		return out
	}
	bodies := func(to string) []string {
		var out []string
		for _, r := range f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"}) {
			if strings.Contains(string(r.Body), `"to":"`+to+`"`) {
				out = append(out, string(r.Body))
			}
		}
		return out
	}
	waitDoc := func(name string, what string, ok func(map[string]any) bool) map[string]any {
		deadline := time.Now().Add(apptest.WaitLimit(60 * time.Second))
		for {
			d := api.data("GET", bulks+"/"+name, nil, 200)
			if ok(d) {
				return d
			}
			if time.Now().After(deadline) {
				var rs []struct{ PhoneNumber, Status string }
				f.DB.Raw(`SELECT phone_number, status FROM campaign_recipients WHERE status <> 'read' ORDER BY phone_number LIMIT 10`).Scan(&rs)
				var cs []struct {
					Status        string
					RunGeneration int
				}
				f.DB.Raw(`SELECT status, run_generation FROM campaigns WHERE id = ?`, d["campaign"]).Scan(&cs)
				t.Fatalf("%s not %s: %v\ncampaign %+v, recipients not read %+v", name, what, d, cs, rs)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	recipients := make([]map[string]any, 500)
	for i := range recipients {
		recipients[i] = map[string]any{"mobile_number": fmt.Sprintf("+1555800%04d", i), "recipient_name": fmt.Sprintf("R%d", i)}
	}
	// Refusals change nothing.
	api.refused("POST", bulks, map[string]any{"title": "none", "template": hello}, 417, "ValidationError", "has no recipients")
	api.refused("POST", bulks, map[string]any{"title": "bad", "template": hello,
		"recipients": []map[string]any{{"mobile_number": "+15558000001"}, {"mobile_number": "12"}}}, 417, "ValidationError",
		`recipients row 2: mobile_number "12" is not a valid phone number`)
	api.refused("POST", bulks, map[string]any{"title": "list", "template": hello, "recipient_type": "Recipient List"}, 417,
		"ValidationError", "Recipient List is required")
	if n := countDocs(f.SimEnv.Env, "Platform Bulk Message"); n != 0 {
		t.Fatalf("%d bulk messages after refusals", n)
	}

	// A draft sends nothing; missing variables refuse the submit.
	year := time.Now().UTC().Format("2006")
	missing := api.data("POST", bulks, map[string]any{"title": "missing", "template": hello,
		"recipients": recipients[:2], "template_variables": map[string]any{"1": "Ann"}}, 201)
	if missing["name"] != "BULK-"+year+"-00001" || missing["status"] != "Draft" || fmt.Sprint(missing["recipient_count"]) != "2" {
		t.Fatalf("draft %v", missing)
	}
	api.refused("POST", bulks+"/"+missing["name"].(string)+"/submit", nil, 417, "ValidationError", "has no value for 2")
	big := api.data("POST", bulks, map[string]any{"title": "Big", "template": hello, "recipients": recipients,
		"variable_type": "Common", "template_variables": map[string]any{"1": "Ann", "2": "X-42"}}, 201)
	name := big["name"].(string)
	if fmt.Sprint(big["recipient_count"]) != "500" || big["status"] != "Draft" {
		t.Fatalf("big draft %v", big)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(sends()); n != 0 {
		t.Fatalf("drafts sent %d messages", n)
	}

	// Rights are the core's campaign permissions: an Agent (none of them)
	// does not even read a bulk message; a role with campaigns:read reads
	// but does not submit (campaigns:update); another organization sees
	// nothing.
	agentOnly := frappeClient{t, f.SimEnv.Env, f.CreateUser(f.admin.Auth(), "agent@bulk.test", "Agent").Auth()}
	agentOnly.refused("GET", bulks+"/"+name, nil, 403, "PermissionError", "campaigns:read")
	f.Do("POST", "/api/roles", map[string]any{"name": "Campaign viewer", "permissions": []string{"campaigns:read"}}, f.admin.Auth()).Expect(t, 201)
	agent := frappeClient{t, f.SimEnv.Env, f.CreateUser(f.admin.Auth(), "viewer@bulk.test", "Campaign viewer").Auth()}
	if got := agent.data("GET", bulks+"/"+name, nil, 200); got["name"] != name {
		t.Fatalf("a campaigns:read role reads %v", got)
	}
	agent.refused("POST", bulks+"/"+name+"/submit", nil, 403, "PermissionError", "submit on Platform Bulk Message for role Campaign viewer (needs the permission campaigns:update)")
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Bulk B"}, f.admin.Auth()).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, f.admin.Auth()).Expect(t, 200).Into(t, &inB)
	other := frappeClient{t, f.SimEnv.Env, f.CreateUser(inB.Auth(), "b@bulk.test", "Admin").Auth()}
	other.refused("GET", "/api/method/wharf.api.bulk_progress?name="+name, nil, 404, "DoesNotExistError", "not found")
	other.refused("POST", "/api/method/wharf.api.retry_failed", map[string]any{"name": name}, 404, "DoesNotExistError", "not found")

	started := time.Now()
	sub := api.data("POST", bulks+"/"+name+"/submit", nil, 200)
	if sub["status"] != "Queued" || fmt.Sprint(sub["docstatus"]) != "1" || sub["campaign"] == nil {
		t.Fatalf("submitted %v", sub)
	}
	done := waitDoc(name, "partially failed", func(d map[string]any) bool {
		return d["status"] == "Partially Failed" && fmt.Sprint(d["failed_count"]) == "1" && fmt.Sprint(d["sent_count"]) == "499"
	})
	t.Logf("500 recipients settled in %v", time.Since(started).Round(time.Millisecond))
	if fmt.Sprint(done["recipient_count"]) != "500" {
		t.Fatalf("done %v", done)
	}
	got := sends()
	if len(got) != 500 {
		t.Fatalf("%d recipients reached, want 500", len(got))
	}
	for to, n := range got {
		if n != 1 {
			t.Fatalf("%s got %d messages", to, n)
		}
	}
	if b := bodies("15558000007"); len(b) != 1 || !strings.Contains(b[0], `"text":"Ann"`) || !strings.Contains(b[0], `"text":"X-42"`) {
		t.Fatalf("common variables: %v", b)
	}
	prog := api.do("GET", "/api/method/wharf.api.bulk_progress?name="+name, nil, 200)["message"].(map[string]any)
	if fmt.Sprintf("%v %v %v %v %v", prog["total"], prog["sent"], prog["failed"], prog["queued"], prog["percent"]) != "500 499 1 0 100" {
		t.Fatalf("bulk_progress %v", prog)
	}

	// Retry: the provider accepts it now; it is resent once.
	f.Sim.UpdateConfig(func(c *platformsim.Config) { c.FailRecipients = nil })
	agent.refused("POST", "/api/method/wharf.api.retry_failed", map[string]any{"name": name}, 403, "PermissionError", "submit")
	retried := api.do("POST", "/api/method/wharf.api.retry_failed", map[string]any{"name": name}, 200)["message"].(map[string]any)
	if fmt.Sprint(retried["requeued"]) != "1" {
		t.Fatalf("retry_failed %v", retried)
	}
	waitDoc(name, "completed", func(d map[string]any) bool {
		return d["status"] == "Completed" && fmt.Sprint(d["failed_count"]) == "0" && fmt.Sprint(d["sent_count"]) == "500"
	})
	got = sends()
	if got[failing] != 2 || got["15558000007"] != 1 || len(got) != 500 {
		t.Fatalf("after retry: failing number %d messages, another %d, %d numbers", got[failing], got["15558000007"], len(got))
	}
	// Every accepted send is recorded as a Platform Message of the bulk
	// message: 500, and the failing number's second send.
	apptest.Eventually(t, 20*time.Second, "Platform Messages of the bulk message", func() bool {
		var n int64
		f.DB.Raw(`SELECT count(*) FROM docframe_documents WHERE doctype = 'Platform Message' AND data->>'bulk_message' = ?`, name).Scan(&n)
		return n == 501
	})
	var failedDocs int64
	f.DB.Raw(`SELECT count(*) FROM docframe_documents WHERE doctype = 'Platform Message' AND data->>'bulk_message' = ?
		AND data->>'to' LIKE ? AND data->>'status' = 'failed'`, name, "%"+failing).Scan(&failedDocs)
	if failedDocs != 1 {
		t.Errorf("%d failed Platform Messages to the failing number, want 1 (its first send)", failedDocs)
	}
	api.refused("POST", "/api/method/wharf.api.retry_failed", map[string]any{"name": missing["name"]}, 417, "ValidationError", "not submitted")

	// A recipient list from a DocType: filters and data fields; Unique
	// variables from recipient_data, mapped by template_variables.
	api.data("POST", "/api/resource/DocType", map[string]any{"name": "Club Member", "fields": []map[string]any{
		{"fieldname": "member_name", "fieldtype": "Data"}, {"fieldname": "mobile", "fieldtype": "Data"},
		{"fieldname": "city", "fieldtype": "Data"}, {"fieldname": "code", "fieldtype": "Data"}}}, 201)
	for _, m := range []map[string]any{
		{"member_name": "Zoe", "mobile": "+15558100001", "city": "Paris", "code": "Z-1"},
		{"member_name": "Yan", "mobile": "+15558100002", "city": "Paris", "code": "Y-2"},
		{"member_name": "Xia", "mobile": "not a number", "city": "Paris", "code": "X-3"},
		{"member_name": "Wim", "mobile": "+15558100004", "city": "Oslo", "code": "W-4"},
	} {
		api.data("POST", "/api/resource/Club%20Member", m, 201)
	}
	importArgs := map[string]any{"list_name": "Paris", "doctype": "Club Member", "mobile_field": "mobile", "name_field": "member_name",
		"filters": map[string]any{"city": "Paris"}, "data_fields": []string{"code", "city"}}
	imp := api.do("POST", "/api/method/wharf.api.import_recipients", importArgs, 200)["message"].(map[string]any)
	if fmt.Sprintf("%v %v", imp["count"], imp["skipped"]) != "2 1" {
		t.Fatalf("import_recipients %v", imp)
	}
	again := api.do("POST", "/api/method/wharf.api.import_recipients", importArgs, 200)["message"].(map[string]any)
	if fmt.Sprintf("%v %v", again["count"], again["total"]) != "0 2" {
		t.Fatalf("a second import added %v", again)
	}
	bad := map[string]any{"list_name": "x", "doctype": "Club Member", "mobile_field": "mobile", "filters": `[["nope", "=", 1]]`}
	api.refused("POST", "/api/method/wharf.api.import_recipients", bad, 417, "ValidationError", "nope")
	list := api.data("GET", "/api/resource/Platform%20Recipient%20List/Paris", nil, 200)
	rows := list["recipients"].([]any)
	first := rows[0].(map[string]any)
	data, _ := json.Marshal(first["recipient_data"])
	if len(rows) != 2 || first["mobile_number"] != "+15558100001" || first["recipient_name"] != "Zoe" || string(data) != `{"city":"Paris","code":"Z-1"}` {
		t.Fatalf("list rows %v", rows)
	}
	unique := api.data("POST", bulks, map[string]any{"title": "Unique", "template": hello, "recipient_type": "Recipient List",
		"recipient_list": "Paris", "variable_type": "Unique", "template_variables": map[string]any{"1": "city", "2": "code"}}, 201)
	if fmt.Sprint(unique["recipient_count"]) != "2" {
		t.Fatalf("unique %v", unique)
	}
	api.data("POST", bulks+"/"+unique["name"].(string)+"/submit", nil, 200)
	waitDoc(unique["name"].(string), "completed", func(d map[string]any) bool { return d["status"] == "Completed" })
	if b := bodies("15558100002"); len(b) != 1 || !strings.Contains(b[0], `"text":"Paris"`) || !strings.Contains(b[0], `"text":"Y-2"`) {
		t.Fatalf("unique variables: %v", b)
	}

	// attach is the header media of a template that has one: every
	// recipient's send carries the document's link and file name.
	docTmpl := seedDocumentTemplate(t, f, "bulk_invoice", "Your invoice {{1}}")
	invoice := mirrorTemplate(api, docTmpl, "Your invoice {{1}}")
	api.refused("POST", bulks, map[string]any{"title": "rel", "template": invoice, "attach": "/files/inv.pdf",
		"recipients": []map[string]any{{"mobile_number": "+15558300001"}}}, 417, "ValidationError", "absolute http(s) URL")
	withDoc := api.data("POST", bulks, map[string]any{"title": "Invoices", "template": invoice,
		"attach": "https://files.example.test/bulk/terms-2026.pdf", "template_variables": map[string]any{"1": "of March"},
		"recipients": []map[string]any{{"mobile_number": "+15558300001"}, {"mobile_number": "+15558300002"}}}, 201)
	api.data("POST", bulks+"/"+withDoc["name"].(string)+"/submit", nil, 200)
	waitDoc(withDoc["name"].(string), "completed", func(d map[string]any) bool {
		return d["status"] == "Completed" && fmt.Sprint(d["sent_count"]) == "2"
	})
	for _, to := range []string{"15558300001", "15558300002"} {
		b := bodies(to)
		if len(b) != 1 || !strings.Contains(b[0], `"document":{"link":"https://files.example.test/bulk/terms-2026.pdf","filename":"terms-2026.pdf"}`) ||
			!strings.Contains(b[0], `"text":"of March"`) {
			t.Fatalf("header media to %s: %v", to, b)
		}
	}

	// A scheduled bulk message waits for its time.
	at := time.Now().UTC().Add(4 * time.Second).Truncate(time.Second) // stored to the second
	later := api.data("POST", bulks, map[string]any{"title": "Later", "template": hello,
		"recipients":         []map[string]any{{"mobile_number": "+15558200001", "recipient_data": map[string]any{"1": "Lu", "2": "L-1"}}},
		"variable_type":      "Unique",
		"scheduled_time":     at.Format("2006-01-02 15:04:05"),
		"template_variables": nil}, 201)
	api.data("POST", bulks+"/"+later["name"].(string)+"/submit", nil, 200)
	time.Sleep(time.Second)
	if n := sends()["15558200001"]; n != 0 || time.Now().After(at) {
		t.Fatalf("a scheduled bulk message sent %d messages early", n)
	}
	waitDoc(later["name"].(string), "completed", func(d map[string]any) bool { return d["status"] == "Completed" })
	for _, m := range f.Sim.Messages(platformsim.MessageFilter{PhoneNumberID: f.PhoneNumberID()}) {
		if m.To == "15558200001" && m.SentAt.Before(at) {
			t.Fatalf("sent at %v, scheduled for %v", m.SentAt, at)
		}
	}
}

// mirrorTemplate creates the Platform Template document of a core template,
// as wharf.api.sync_templates does (template_id set: it is not submitted
// again), and answers its name.
func mirrorTemplate(api frappeClient, t models.Template, body string) string {
	api.t.Helper()
	return api.data("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": t.Name, "language_code": t.Language,
		"category": t.Category, "template": body, "template_id": t.ProviderTemplateID, "status": t.Status}, 201)["name"].(string)
}

// seedDocumentTemplate is SeedTemplate for a positional template with a
// DOCUMENT header: created and approved at the simulator, stored APPROVED.
func seedDocumentTemplate(t *testing.T, f *fixture, name, body string) models.Template {
	t.Helper()
	ctx := context.Background()
	client := platform.New(f.SimServer.URL, "", nil)
	creds := platform.Creds{AccessToken: f.WABA.AccessToken, BusinessAccountID: f.WABA.ID}
	comps := []map[string]any{{"type": "HEADER", "format": "DOCUMENT"}, {"type": "BODY", "text": body}}
	raw, _ := json.Marshal([]map[string]any{comps[0], {"type": "BODY", "text": body, "example": map[string]any{"body_text": [][]string{{"x"}}}}})
	created, err := client.CreateTemplate(ctx, creds, platform.TemplateDefinition{Name: name, Language: "en_US", Category: "UTILITY",
		ParameterFormat: "POSITIONAL", Components: raw})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Sim.SetTemplateStatus(ctx, created.ID, models.TemplateApproved, ""); err != nil {
		t.Fatal(err)
	}
	tm := models.Template{ID: uuid.New(), OrganizationID: uuid.MustParse(f.orgID), AccountID: uuid.MustParse(f.accountID),
		ProviderTemplateID: created.ID, Name: name, Language: "en_US", Category: "UTILITY", Status: models.TemplateApproved,
		ParameterFormat: "positional"}
	tm.Components.V = comps
	tm.SampleValues.V = []map[string]any{}
	if err := f.DB.WithContext(ctx).Create(&tm).Error; err != nil {
		t.Fatal(err)
	}
	return tm
}
