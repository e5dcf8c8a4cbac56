package e2e_test

import (
	"fmt"
	"net/url"
	"testing"

	"wharf/internal/apptest"
	"wharf/internal/integration/docframe"
)

// A list answer is bounded in bytes, not only in rows: past
// docframe.MaxListBytes (4 MiB) of rows it is a 417 asking for fewer fields
// or rows, whatever the route (the resource list, frappe.client.get_list),
// never a truncated page (a client paging by limit_start would take it for
// the end of the list). Smaller selections of the same rows answer.
func TestResourceListAnswerIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	admin := e.Admin()
	api := frappeClient{t, e, admin.Auth()}
	api.data("POST", doctypes, map[string]any{"name": "Blob", "fields": []map[string]any{
		{"fieldname": "title", "fieldtype": "Data"}, {"fieldname": "body", "fieldtype": "Long Text"}}}, 201)
	var org string
	e.DB.Raw(`SELECT organization_id FROM docframe_doctypes WHERE name = 'Blob'`).Scan(&org)
	// Ten documents of 1 MiB each.
	if err := e.DB.Exec(`INSERT INTO docframe_documents (organization_id, doctype, name, docstatus, owner, modified_by, creation, modified, data)
		SELECT ?, 'Blob', 'B' || i, 0, 'a@wharf.test', 'a@wharf.test', now(), now(),
		       jsonb_build_object('title', 'blob ' || i, 'body', repeat('x', 1048576))
		FROM generate_series(1, 10) AS i`, org).Error; err != nil {
		t.Fatal(err)
	}
	msg := fmt.Sprintf("the answer would be larger than %d MiB (at row 4): ask for fewer fields or a smaller limit", docframe.MaxListBytes>>20)
	for _, path := range []string{
		"/api/resource/Blob" + q("fields", `["*"]`),
		"/api/resource/Blob" + q("fields", `["body"]`, "as_dict", "0", "limit", "0"),
		"/api/method/frappe.client.get_list?doctype=Blob&fields=" + url.QueryEscape(`["title","body"]`),
	} {
		api.refused("GET", path, nil, 417, "ValidationError", msg)
	}
	if rows, _ := api.do("GET", "/api/resource/Blob"+q("fields", `["*"]`, "limit", "3"), nil, 200)["data"].([]any); len(rows) != 3 {
		t.Fatalf("3 rows of 1 MiB: %d", len(rows))
	}
	if got := api.names("/api/resource/Blob"+q("fields", `["title"]`, "order_by", "name asc", "limit", "2"), "title"); got != "blob 1,blob 10" {
		t.Fatalf("titles %q", got)
	}
	if rows, _ := api.do("GET", "/api/resource/Blob"+q("fields", `["name","title"]`), nil, 200)["data"].([]any); len(rows) != 10 {
		t.Fatalf("10 small rows: %d", len(rows))
	}
}
