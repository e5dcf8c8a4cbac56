package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/apptest"
	"wharf/jobs"
	"wharf/platformsim"
)

// TestWharfNotifications: through the api, the worker and the simulator, a
// DocType Event notification with a Starlark condition sends its Platform
// Template with the mapped fields as parameters and sets a property after;
// a Cron scheduler notification whose script sets doc._data_list sends the
// template once per object, and a second run of the same tick sends nothing.
func TestWharfNotifications(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	e.Sim.SetWebhookURL(e.Server.URL + "/api/method/wharf.utils.webhook.webhook")
	admin := e.Admin()
	c := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	wharfAccount(t, e, c, "Main", e.WABA, true)
	tpl := c.data("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": "order_ready",
		"language_code": "en_US", "category": "UTILITY", "template": "Hello {{1}}, order {{2}} is ready"}, 201)["name"].(string)
	apptest.Eventually(t, 30*time.Second, "template approved", func() bool {
		return c.data("GET", "/api/resource/Platform%20Template/"+url.PathEscape(tpl), nil, 200)["status"] == "APPROVED"
	})
	c.data("POST", "/api/resource/DocType", map[string]any{"name": "Shop Order", "fields": []map[string]any{
		{"fieldname": "customer", "fieldtype": "Data"}, {"fieldname": "mobile", "fieldtype": "Data"},
		{"fieldname": "order_no", "fieldtype": "Data"}, {"fieldname": "amount", "fieldtype": "Int"},
		{"fieldname": "notified", "fieldtype": "Check"}}}, 201)

	// A condition that does not compile is refused when the notification is saved.
	c.refused("POST", "/api/resource/Platform%20Notification", map[string]any{"notification_name": "broken",
		"notification_type": "DocType Event", "reference_doctype": "Shop Order", "doctype_event": "After Insert",
		"template": tpl, "field_name": "mobile", "condition": "doc.amount >"}, 417, "ValidationError", "")
	c.data("POST", "/api/resource/Platform%20Notification", map[string]any{"notification_name": "big orders",
		"notification_type": "DocType Event", "reference_doctype": "Shop Order", "doctype_event": "After Insert",
		"template": tpl, "field_name": "mobile", "condition": "doc.amount > 100",
		"fields":                   []map[string]any{{"field_name": "customer"}, {"field_name": "order_no"}},
		"set_property_after_alert": "notified", "property_value": "1"}, 201)

	small := c.data("POST", "/api/resource/Shop%20Order", map[string]any{"customer": "Bo", "mobile": "+15550004001",
		"order_no": "S-1", "amount": 50}, 201)
	big := c.data("POST", "/api/resource/Shop%20Order", map[string]any{"customer": "Ann", "mobile": "+15550004002",
		"order_no": "B-7", "amount": 500}, 201)
	apptest.Eventually(t, 15*time.Second, "the big order notified", func() bool {
		return c.data("GET", "/api/resource/Shop%20Order/"+url.PathEscape(big["name"].(string)), nil, 200)["notified"] == json.Number("1")
	})
	// The property is set once the message is queued; the worker sends it.
	var sims []platformsim.Message
	apptest.Eventually(t, 10*time.Second, "the notification sent", func() bool {
		sims = e.Sim.Messages(platformsim.MessageFilter{To: "15550004002"})
		return len(sims) > 0
	})
	if len(sims) != 1 || sims[0].Type != "template" || !strings.Contains(string(sims[0].Body), `"Ann"`) ||
		!strings.Contains(string(sims[0].Body), `"B-7"`) || strings.Index(string(sims[0].Body), `"Ann"`) > strings.Index(string(sims[0].Body), `"B-7"`) {
		t.Fatalf("simulator got %+v", sims)
	}
	if n := len(e.Sim.Messages(platformsim.MessageFilter{To: "15550004001"})); n != 0 {
		t.Fatalf("the condition was false, yet %d messages went to the small order", n)
	}
	if got := c.data("GET", "/api/resource/Shop%20Order/"+url.PathEscape(small["name"].(string)), nil, 200)["notified"]; got != json.Number("0") {
		t.Fatalf("small order notified = %v", got)
	}

	// A Cron notification whose script lists its own recipients.
	c.data("POST", "/api/resource/Platform%20Notification", map[string]any{"notification_name": "digest",
		"notification_type": "Scheduler Event", "reference_doctype": "Shop Order", "event_frequency": "Cron",
		"cron_format": "* * * * *", "template": tpl, "field_name": "mobile",
		"condition": "if doc.amount > 100:\n    doc._data_list = [{\"phone\": \"+15550004101\", \"who\": \"Cy\", \"code\": \"D-1\"}, " +
			"{\"phone\": \"+15550004102\", \"who\": \"Di\", \"code\": \"D-2\"}]\n",
		"fields": []map[string]any{{"field_name": "who"}, {"field_name": "code"}}}, 201)
	client := asynq.NewClientFromRedisClient(e.Redis)
	enq := jobs.NewEnqueuer(client, nil)
	tick := time.Now().UTC().Truncate(time.Minute)
	for range 2 { // the same tick twice: a second scheduler firing must send nothing more
		if _, err := enq.Enqueue(context.Background(), jobs.NotifyTick{Tick: tick}); err != nil && !errors.Is(err, jobs.ErrDuplicate) {
			t.Fatal(err)
		}
	}
	apptest.Eventually(t, 15*time.Second, "one digest per object", func() bool {
		return len(e.Sim.Messages(platformsim.MessageFilter{To: "15550004101"})) == 1 &&
			len(e.Sim.Messages(platformsim.MessageFilter{To: "15550004102"})) == 1
	})
	time.Sleep(time.Second)
	d := e.Sim.Messages(platformsim.MessageFilter{To: "15550004102"})
	if len(d) != 1 || !strings.Contains(string(d[0].Body), `"Di"`) || !strings.Contains(string(d[0].Body), `"D-2"`) {
		t.Fatalf("digest to Di: %+v", d)
	}
	if n := len(e.Sim.Messages(platformsim.MessageFilter{To: "15550004101"})); n != 1 {
		t.Fatalf("%d digests to Cy after a repeated tick, want 1", n)
	}
}

// TestWharfNotificationHeaderAndButton: a notification whose template has
// a DOCUMENT header and a URL button with {{1}} sends its attachment as
// the header document (link and file name) and the document's button field
// as the button's parameter; template and platform_account are Links.
func TestWharfNotificationHeaderAndButton(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	e.Sim.SetWebhookURL(e.Server.URL + "/api/method/wharf.utils.webhook.webhook")
	c := frappeClient{t: t, e: e.Env, auth: e.Admin().Auth()}
	wharfAccount(t, e, c, "Main", e.WABA, true)
	tpl := c.data("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": "invoice_ready",
		"language_code": "en_US", "category": "UTILITY", "header_type": "DOCUMENT", "header": "https://files.example.test/sample.pdf",
		"template": "Invoice {{1}} is ready",
		"buttons": []map[string]any{{"button_type": "Quick Reply", "button_label": "Thanks"},
			{"button_type": "URL", "button_label": "Track", "url": "https://shop.example.test/track/{{1}}"}}}, 201)["name"].(string)
	apptest.Eventually(t, 30*time.Second, "template approved", func() bool {
		return c.data("GET", "/api/resource/Platform%20Template/"+url.PathEscape(tpl), nil, 200)["status"] == "APPROVED"
	})
	c.data("POST", "/api/resource/DocType", map[string]any{"name": "Sales Invoice", "fields": []map[string]any{
		{"fieldname": "mobile", "fieldtype": "Data"}, {"fieldname": "invoice_no", "fieldtype": "Data"},
		{"fieldname": "tracking", "fieldtype": "Data"}}}, 201)
	base := map[string]any{"notification_name": "invoice", "notification_type": "DocType Event", "reference_doctype": "Sales Invoice",
		"doctype_event": "After Insert", "template": tpl, "platform_account": "Main", "field_name": "mobile",
		"fields": []map[string]any{{"field_name": "invoice_no"}}, "custom_attachment": 1,
		"attach": "https://files.example.test/invoices/INV-9.pdf?sig=abc", "button_fields": "tracking"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range base {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	c.refused("POST", "/api/resource/Platform%20Notification", with("template", "invoice_ready"), 417, "LinkValidationError", "invoice_ready")
	c.refused("POST", "/api/resource/Platform%20Notification", with("platform_account", "Other"), 417, "LinkValidationError", "Other")
	c.refused("POST", "/api/resource/Platform%20Notification", with("attach", "/files/INV-9.pdf"), 417, "ValidationError", "absolute http(s) URL")
	c.data("POST", "/api/resource/Platform%20Notification", base, 201)

	c.data("POST", "/api/resource/Sales%20Invoice", map[string]any{"mobile": "+15550004201", "invoice_no": "INV-9", "tracking": "TRK-42"}, 201)
	var sims []platformsim.Message
	apptest.Eventually(t, 15*time.Second, "the notification sent", func() bool {
		sims = e.Sim.Messages(platformsim.MessageFilter{To: "15550004201"})
		return len(sims) > 0
	})
	body := string(sims[0].Body)
	for _, want := range []string{
		`"document":{"link":"https://files.example.test/invoices/INV-9.pdf?sig=abc","filename":"INV-9.pdf"}`,
		`"text":"INV-9"`,
		`"sub_type":"url","index":"1","parameters":[{"type":"text","text":"TRK-42"}]`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the provider got %s\nwant %s", body, want)
		}
	}
	if len(sims) != 1 || sims[0].Type != "template" {
		t.Fatalf("simulator got %+v", sims)
	}

	// Attach Document Print: the provider gets a signed link to the
	// invoice's print, which serves a PDF without credentials.
	printed := with("attach_document_print", 1)
	printed["notification_name"], printed["custom_attachment"], printed["attach"] = "invoice print", 0, ""
	c.refused("POST", "/api/resource/Platform%20Notification", with("attach_document_print", 1), 417, "ValidationError", "both set")
	c.data("PUT", "/api/resource/Platform%20Notification/invoice", map[string]any{"disabled": 1}, 200)
	c.data("POST", "/api/resource/Platform%20Notification", printed, 201)
	inv := c.data("POST", "/api/resource/Sales%20Invoice", map[string]any{"mobile": "+15550004202", "invoice_no": "INV-10",
		"tracking": "TRK-43"}, 201)["name"].(string)
	apptest.Eventually(t, 15*time.Second, "the print sent", func() bool {
		sims = e.Sim.Messages(platformsim.MessageFilter{To: "15550004202"})
		return len(sims) > 0
	})
	var sent struct {
		Template struct {
			Components []struct {
				Type       string `json:"type"`
				Parameters []struct {
					Document *struct {
						Link     string `json:"link"`
						Filename string `json:"filename"`
					} `json:"document"`
				} `json:"parameters"`
			} `json:"components"`
		} `json:"template"`
	}
	if err := json.Unmarshal(sims[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	var link, filename string
	for _, comp := range sent.Template.Components {
		if comp.Type == "header" && len(comp.Parameters) == 1 && comp.Parameters[0].Document != nil {
			link, filename = comp.Parameters[0].Document.Link, comp.Parameters[0].Document.Filename
		}
	}
	rel, ok := strings.CutPrefix(link, e.Cfg.PublicURL)
	if !ok || filename != inv+".pdf" || !strings.Contains(rel, "/api/files/") {
		t.Fatalf("print header link %q filename %q (body %s)", link, filename, sims[0].Body)
	}
	res, err := http.Get(e.Server.URL + rel)
	if err != nil {
		t.Fatal(err)
	}
	pdf, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF-")) ||
		!bytes.Contains(pdf, []byte("(Invoice no: INV-10)")) {
		t.Fatalf("the print link answered %d %s:\n%s", res.StatusCode, res.Header.Get("Content-Type"), pdf)
	}
}

// TestWharfDocTypesUpgrade: a Platform Notification DocType stored by an
// older version (template and platform_account as Data), with documents,
// is brought up to date by the api's upgrade: the fields become Links and
// the stored documents stay.
func TestWharfDocTypesUpgrade(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	c := frappeClient{t: t, e: e.Env, auth: e.Admin().Auth()}
	c.data("POST", "/api/resource/DocType", map[string]any{"name": "Visit", "fields": []map[string]any{
		{"fieldname": "mobile", "fieldtype": "Data"}}}, 201)
	fieldtypes := func() map[string]any {
		out := map[string]any{}
		for _, f := range c.data("GET", "/api/resource/DocType/Platform%20Notification", nil, 200)["fields"].([]any) {
			m := f.(map[string]any)
			out[m["fieldname"].(string)] = m["fieldtype"]
		}
		return out
	}
	c.do("GET", "/api/resource/Platform%20Notification", nil, 200) // its first use creates the DocType
	if ft := fieldtypes(); ft["template"] != "Link" || ft["platform_account"] != "Link" {
		t.Fatalf("fieldtypes %v", ft)
	}
	// The older definition, as an earlier version stored it.
	var def string
	e.DB.Raw(`SELECT definition FROM docframe_doctypes WHERE name = 'Platform Notification'`).Scan(&def)
	var m map[string]any
	if err := json.Unmarshal([]byte(def), &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range m["fields"].([]any) {
		if fm := f.(map[string]any); fm["fieldname"] == "template" || fm["fieldname"] == "platform_account" {
			fm["fieldtype"], fm["options"] = "Data", ""
		}
	}
	b, _ := json.Marshal(m)
	if err := e.DB.Exec(`UPDATE docframe_doctypes SET definition = ?::jsonb WHERE name = 'Platform Notification'`, string(b)).Error; err != nil {
		t.Fatal(err)
	}
	c.data("POST", "/api/resource/Platform%20Notification", map[string]any{"notification_name": "old", "reference_doctype": "Visit",
		"doctype_event": "After Insert", "template": "legacy_name", "field_name": "mobile"}, 201)
	if ft := fieldtypes(); ft["template"] != "Data" {
		t.Fatalf("the older definition was not stored: %v", ft)
	}
	n, err := e.API.Services.UpgradeWharfDocTypes(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("upgrade: %d organizations, %v", n, err)
	}
	if ft := fieldtypes(); ft["template"] != "Link" || ft["platform_account"] != "Link" {
		t.Fatalf("after the upgrade: %v", ft)
	}
	if got := c.data("GET", "/api/resource/Platform%20Notification/old", nil, 200)["template"]; got != "legacy_name" {
		t.Fatalf("the stored document's template: %v", got)
	}
	// Its next save must name a Platform Template.
	c.refused("PUT", "/api/resource/Platform%20Notification/old", map[string]any{"disabled": 1}, 417, "LinkValidationError", "legacy_name")
}
