package console

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"wharf/internal/apptest"
)

// TestConsoleDocuments drives the document framework's pages against the
// real system: the DocTypes the user may read; a Platform Recipient List
// with rows made through the generic form (a refused number shown next to
// its table first); a Platform Notification (a missing template shown next
// to its field first); a Platform Bulk Message submitted after a
// confirmation; each read back through the resource API (rows, links,
// docstatus); the list's filters kept in the URL; a campaign viewer offered
// no change; and a user who may read no DocType offered no entry.
func TestConsoleDocuments(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	f.StartWorker()
	admin := f.Admin.Auth()
	resource := func(method, path string, body any, status int) map[string]any {
		t.Helper()
		r := f.Do(method, path, body, admin).Expect(t, status)
		var out struct {
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &out); err != nil {
			t.Fatalf("%s %s: %s", method, path, r.Body)
		}
		return out.Data
	}
	doc := func(doctype, name string) map[string]any {
		t.Helper()
		return resource("GET", "/api/resource/"+url.PathEscape(doctype)+"/"+url.PathEscape(name), nil, 200)
	}
	// An approved template and its Platform Template (the Links' target),
	// and a DocType of the organization's own that only Managers read.
	seeded := f.SeedTemplate(f.OrgID, f.AccountID, "order_ready", "Your order {{1}} is ready", false)
	tmpl := resource("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": seeded.Name, "language_code": seeded.Language,
		"category": seeded.Category, "template": "Your order {{1}} is ready", "template_id": seeded.ProviderTemplateID, "status": seeded.Status}, 201)["name"].(string)
	resource("POST", "/api/resource/DocType", map[string]any{"name": "Shop Order", "module": "Shop", "fields": []map[string]any{
		{"fieldname": "customer", "fieldtype": "Data", "in_list_view": 1}, {"fieldname": "mobile", "fieldtype": "Data"}},
		"permissions": []map[string]any{{"role": "Manager", "read": 1, "write": 1, "create": 1}}}, 201)

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("the DocTypes the user may read", func(t *testing.T) {
		p.in(t)
		p.click("link", "Documents")
		p.seeRole("heading", "Documents")
		for _, name := range []string{"Platform Notification", "Platform Bulk Message", "Platform Recipient List", "Shop Order"} {
			p.seeRole("link", name)
		}
		if p.has("link", "Platform Bulk Recipient") {
			t.Fatal("a child table is listed as a DocType")
		}
		p.axe("documents")
	})

	t.Run("a recipient list with rows", func(t *testing.T) {
		p.in(t)
		p.click("link", "Platform Recipient List")
		p.seeRole("heading", "Platform Recipient List")
		p.see("No Platform Recipient List yet.")
		p.click("link", "New Platform Recipient List")
		p.seeRole("heading", "New Platform Recipient List")
		p.fill("List Name (required)", "VIP customers")
		p.click("button", "Add a row to Recipients")
		p.fillNamed("Mobile Number, row 1", "+15550001001")
		p.fillNamed("Recipient Name, row 1", "Ada")
		p.click("button", "Add a row to Recipients")
		p.fillNamed("Mobile Number, row 2", "12")
		p.fillNamed("Recipient Name, row 2", "Bob")
		p.click("button", "Create Platform Recipient List")
		// The refusal is shown under the table it is about.
		p.waitUntil("the refusal next to Recipients", `(() => { const a = byRole('alert', null); return a && a.closest('.doc-form__table') && /row 2/.test(a.textContent) })()`)
		p.shot("refused-recipient")
		p.axe("refused recipient")
		p.fillNamed("Mobile Number, row 2", "+15550001002")
		p.click("button", "Create Platform Recipient List")
		p.see("Platform Recipient List VIP customers created.")
		p.seeRole("heading", "VIP customers")
		d := doc("Platform Recipient List", "VIP customers")
		rows, _ := d["recipients"].([]any)
		if len(rows) != 2 || rows[0].(map[string]any)["mobile_number"] != "+15550001001" || rows[1].(map[string]any)["recipient_name"] != "Bob" {
			t.Fatalf("the server holds %v", d)
		}
	})

	t.Run("a notification; a missing template shown next to its field", func(t *testing.T) {
		p.in(t)
		p.open("/console/documents/Platform%20Notification/new")
		p.seeRole("heading", "New Platform Notification")
		p.fill("Notification Name (required)", "Order ready")
		p.fill("Reference Document Type (required)", "Shop Order")
		p.choose("DocType Event", "After Insert")
		p.fill("Field Name (phone)", "mobile")
		p.click("button", "Add a row to Fields")
		p.fillNamed("Field Name, row 1", "customer")
		p.click("button", "Create Platform Notification")
		p.waitUntil("the refusal next to Template", `(() => { const i = labelled('Template (required)'); const d = i && i.getAttribute('aria-describedby'); return d && d.split(' ').some((id) => /Template/.test(document.getElementById(id)?.textContent || '')) && i.getAttribute('aria-invalid') === 'true' })()`)
		p.shot("refused-notification")
		p.fill("Template (required)", tmpl)
		p.click("button", "Create Platform Notification")
		p.see("Platform Notification Order ready created.")
		d := doc("Platform Notification", "Order ready")
		rows, _ := d["fields"].([]any)
		if d["template"] != tmpl || d["reference_doctype"] != "Shop Order" || d["doctype_event"] != "After Insert" || len(rows) != 1 {
			t.Fatalf("the server holds %v", d)
		}
	})

	var bulk string
	t.Run("a bulk message submitted after a confirmation", func(t *testing.T) {
		p.in(t)
		p.open("/console/documents/Platform%20Bulk%20Message")
		p.click("link", "New Platform Bulk Message")
		p.seeRole("heading", "New Platform Bulk Message")
		p.fill("Title (required)", "Spring sale")
		p.fill("Template (required)", tmpl)
		p.choose("Recipient Type", "Recipient List")
		p.fill("Recipient List", "VIP customers")
		p.fill("Template Variables", `{"1": "A-17"}`)
		p.click("button", "Create Platform Bulk Message")
		p.see("created.")
		p.seeRole("button", "Submit")
		bulk = strings.TrimPrefix(p.path(), "/console/documents/Platform%20Bulk%20Message/")
		if d := doc("Platform Bulk Message", bulk); d["docstatus"] != float64(0) || d["recipient_count"] != float64(2) {
			t.Fatalf("the draft %s: %v", bulk, d)
		}
		p.shot("document-form")
		p.click("button", "Submit")
		p.seeRole("heading", "Submit "+bulk+"?")
		p.click("button", "Keep it as it is")
		p.waitUntil("the dialog closed", `!byRole('dialog', null)`)
		if d := doc("Platform Bulk Message", bulk); d["docstatus"] != float64(0) {
			t.Fatalf("kept, yet docstatus %v", d["docstatus"])
		}
		p.click("button", "Submit")
		p.seeRole("heading", "Submit "+bulk+"?")
		p.clickInDialog("Submit Platform Bulk Message")
		p.see("Platform Bulk Message " + bulk + " submitted.")
		p.see("This document is submitted: it can no longer be changed.")
		if p.has("button", "Submit") || p.has("button", "Save") {
			t.Fatal("a submitted document offers Submit or Save")
		}
		p.seeRole("button", "Cancel document")
		if d := doc("Platform Bulk Message", bulk); d["docstatus"] != float64(1) || d["recipient_list"] != "VIP customers" {
			t.Fatalf("submitted, yet the server holds %v", d)
		}
		p.axe("submitted document")
	})

	t.Run("the list: fields, status and filters in the URL", func(t *testing.T) {
		p.in(t)
		resource("POST", "/api/resource/Platform%20Bulk%20Message", map[string]any{"title": "Autumn draft", "template": tmpl,
			"recipients": []map[string]any{{"mobile_number": "+15550001003"}}}, 201)
		p.open("/console/documents/Platform%20Bulk%20Message")
		p.see("Autumn draft")
		p.see("Spring sale")
		p.choose("Filter field", "Title")
		p.choose("Condition", "contains")
		p.fill("Value", "Spring")
		p.click("button", "Add filter")
		p.waitUntil("the filtered list", `!pageText().includes('Autumn draft') && pageText().includes('Spring sale')`)
		if !strings.Contains(p.path(), "filters=") {
			t.Fatalf("the filters are not in the URL: %s", p.path())
		}
		p.reload()
		p.see("Spring sale")
		p.see("Title contains “Spring”")
		p.see("Submitted")
		p.see("1 document")
		if p.has("link", "Autumn draft") || strings.Contains(eval[string](p, `pageText()`), "Autumn draft") {
			t.Fatal("the reloaded list lost its filter")
		}
		p.shot("documents")
		p.axe("filtered list")
		p.click("button", "Remove filter Title contains Spring")
		p.choose("Filter field", "Document status")
		p.choose("Value", "Draft")
		p.click("button", "Add filter")
		p.waitUntil("the drafts", `pageText().includes('Autumn draft') && !pageText().includes('Spring sale')`)
		p.see("Document status is “Draft”")
	})

	t.Run("a campaign viewer reads but is offered no change", func(t *testing.T) {
		f.Do("POST", "/api/roles", map[string]any{"name": "Campaign viewer", "permissions": []string{"campaigns:read"}}, admin).Expect(t, 201)
		v := signInAs(t, b, f, "viewer", "viewer@wharf.test", "Campaign viewer")
		v.click("link", "Documents")
		v.seeRole("link", "Platform Recipient List")
		if v.has("link", "Shop Order") {
			t.Fatal("a DocType the role may not read is listed")
		}
		v.click("link", "Platform Bulk Message")
		v.see("Spring sale")
		if v.has("link", "New Platform Bulk Message") {
			t.Fatal("a viewer is offered New")
		}
		v.open("/console/documents/Platform%20Bulk%20Message/" + bulk)
		v.seeRole("heading", bulk)
		for _, c := range []string{"Submit", "Cancel document", "Delete", "Save"} {
			if v.has("button", c) {
				t.Fatalf("a viewer is offered %s", c)
			}
		}
		v.open("/console/documents/Platform%20Recipient%20List/VIP%20customers")
		v.seeRole("heading", "VIP customers")
		if !eval[bool](v, `labelled('List Name (required)').matches(':disabled')`) || v.has("button", "Add a row to Recipients") {
			t.Fatal("a viewer can change the list")
		}
	})

	t.Run("a user who may read no DocType sees no entry", func(t *testing.T) {
		f.Do("POST", "/api/roles", map[string]any{"name": "Contacts only", "permissions": []string{"contacts:read"}}, admin).Expect(t, 201)
		c := signInAs(t, b, f, "no-documents", "cora@wharf.test", "Contacts only")
		c.seeRole("link", "Contacts")
		if c.has("link", "Documents") {
			t.Fatal("a user who may read no DocType is shown Documents")
		}
		c.open("/console/documents")
		c.seeRole("heading", "No document type you may open")
		c.open("/console/documents/Platform%20Bulk%20Message/" + bulk)
		c.seeRole("heading", "This document cannot be opened")
		for _, ctl := range []string{"Submit", "Cancel document", "Save"} {
			if c.has("button", ctl) {
				t.Fatalf("shown %s", ctl)
			}
		}
		c.axe("no documents")
	})

	t.Run("cancel asks first; a narrow window", func(t *testing.T) {
		p.in(t)
		p.open("/console/documents/Platform%20Bulk%20Message/" + bulk)
		p.click("button", "Cancel document")
		p.seeRole("heading", "Cancel "+bulk+"?")
		p.clickInDialog("Cancel Platform Bulk Message")
		p.see("Platform Bulk Message " + bulk + " cancelled.")
		p.see("This document is cancelled: it can no longer be changed.")
		if d := doc("Platform Bulk Message", bulk); d["docstatus"] != float64(2) {
			t.Fatalf("cancelled, yet docstatus %v", d["docstatus"])
		}
		if p.has("button", "Cancel document") {
			t.Fatal("a cancelled document offers Cancel")
		}
		p.do("narrow window", chromedp.EmulateViewport(420, 860))
		p.open("/console/documents/Platform%20Recipient%20List/VIP%20customers")
		p.seeRole("heading", "VIP customers")
		p.shot("narrow-form")
	})
}

// fillNamed types value into the control whose aria-label is name (a cell
// of a child table), replacing its value.
func (p *page) fillNamed(name, value string) {
	p.t.Helper()
	find := `[...document.querySelectorAll('input, select, textarea')].find((e) => e.getAttribute('aria-label') === ` + js(name) + ` && shown(e))`
	p.waitUntil("the control "+name, find)
	p.do("fill "+name, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[chromedp.Void](withPrelude(`(() => { const e = `+find+`; e.value = ''; e.dispatchEvent(new Event('input', { bubbles: true })); })()`))(ctx, t)
		return err
	}), chromedp.SendKeys(chromedp.JSPath(withPrelude(find)), value))
}

// clickInDialog clicks the open dialog's button of that text (not a page
// button of the same name behind it).
func (p *page) clickInDialog(text string) {
	p.t.Helper()
	if !eval[bool](p, `(() => { const b = [...document.querySelectorAll('dialog[open] button')].find((b) => norm(b.textContent) === `+js(text)+`); if (b) b.click(); return !!b })()`) {
		p.fatalf("%s: no %q button in an open dialog", p.name, text)
	}
}
