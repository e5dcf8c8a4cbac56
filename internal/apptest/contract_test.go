package apptest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"wharf/app"
)

// The contract refuses answers the document does not describe, and accepts
// those it does: the checks every end-to-end test relies on are not
// vacuous.
func TestContractChecksStatusMediaTypeAndBody(t *testing.T) {
	t.Parallel()
	c, err := newContract(app.APIDescription().OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	const id = "/0b8e4f5e-8c5a-4a57-9a52-2f0c1f1d9a11"
	jsonCT := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	for _, tc := range []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		wantErr            string
	}{
		{"data null as declared", "DELETE", "/api/contacts" + id, 200, jsonCT, `{"status":"success","data":null}`, ""},
		{"data where null is declared", "DELETE", "/api/contacts" + id, 200, jsonCT, `{"status":"success","data":{"x":1}}`, "doesn't match"},
		{"a declared error", "GET", "/api/contacts" + id, 404, jsonCT, `{"status":"error","message":"contact not found","data":null}`, ""},
		{"an error that is not the envelope", "GET", "/api/contacts" + id, 404, jsonCT, `{"error":"not found"}`, "doesn't match"},
		{"a status the route does not answer", "GET", "/api/me", 418, jsonCT, `{"status":"error","message":"teapot","data":null}`, "status is not supported"},
		{"a missing field", "POST", "/api/templates/sync", 200, jsonCT, `{"status":"success","data":{"synced":1,"new":1}}`, "doesn't match"},
		{"the other success answer", "POST", "/api/templates/sync", 202, jsonCT, `{"status":"success","data":{"status":"queued","task_id":"t"}}`, ""},
		{"a wrong type", "POST", "/api/templates/sync", 200, jsonCT, `{"status":"success","data":{"synced":"1","new":1,"updated":0}}`, "doesn't match"},
		{"another media type", "POST", "/api/templates/sync", 200, http.Header{"Content-Type": {"text/plain"}}, `ok`, "Content-Type"},
		{"plain text where declared", "GET", "/api/webhook?hub.mode=subscribe", 200, http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, `challenge`, ""},
		{"a route outside the document", "GET", "/healthz", 200, jsonCT, `{"ok":true}`, ""},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		err := c.check(req, tc.status, tc.header, []byte(tc.body))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.wantErr)
		}
	}
}
