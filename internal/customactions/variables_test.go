package customactions

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"wharf/internal/infra/apperr"
	"wharf/internal/testfactory"
)

// A value is escaped for the place it is put in: it never adds a path
// segment, a query parameter, a header line, or breaks a JSON body.
func TestFillEscapesByPlace(t *testing.T) {
	t.Parallel()
	nasty := `O'Brien "Bob" & Sons / Co ?x=1#frag +1 é 日本` + "\r\nX-Injected: yes"
	v := Values{"contact.name": nasty, "contact.id": "c1"}

	got, err := fillURL("https://crm.example/c/{{contact.name}}/x?name={{ contact.name }}&id={{contact.id}}#{{contact.name}}", v)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host != "crm.example" || !strings.HasPrefix(u.EscapedPath(), "/c/") || !strings.HasSuffix(u.Path, "/x") {
		t.Fatalf("path: %s (%s)", got, u.Path)
	}
	if segs := strings.Split(u.EscapedPath(), "/"); len(segs) != 4 {
		t.Fatalf("a value added path segments: %q", u.EscapedPath())
	}
	if u.Path != "/c/"+nasty+"/x" {
		t.Fatalf("path decodes to %q", u.Path)
	}
	q := u.Query()
	if len(q) != 2 || q.Get("name") != nasty || q.Get("id") != "c1" {
		t.Fatalf("query %v", q)
	}
	if u.Fragment != nasty {
		t.Fatalf("fragment %q", u.Fragment)
	}

	body := fill(`{"name": "{{contact.name}}", "n": ["{{contact.id}}"]}`, v, jsonString)
	var decoded struct {
		Name string   `json:"name"`
		N    []string `json:"n"`
	}
	if err := json.Unmarshal([]byte(body), &decoded); err != nil || decoded.Name != nasty || decoded.N[0] != "c1" {
		t.Fatalf("body %s: %+v %v", body, decoded, err)
	}

	h := fill("Bearer {{contact.name}}", v, headerValue)
	if strings.ContainsAny(h, "\r\n") || !strings.Contains(h, "X-Injected: yes") {
		t.Fatalf("header %q", h)
	}

	// Values are not scanned again: a name that looks like a variable is
	// text.
	if got := fill("{{contact.name}}", Values{"contact.name": "{{user.email}}", "user.email": "secret"}, func(s string) string { return s }); got != "{{user.email}}" {
		t.Fatalf("refilled: %q", got)
	}
	// Text that is no placeholder is left alone.
	if got := fill(`{{ "x" }} {{contact.id}} {{`, v, jsonString); got != `{{ "x" }} c1 {{` {
		t.Fatalf("other braces: %q", got)
	}
}

// A value that would make a path segment "." or ".." (which move up the
// target's path) is refused; dots inside a segment, or in the query, are
// fine, and a template's own dot segments are the template's.
func TestFillURLRefusesDotSegments(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"..", ".", "%2e%2E"} {
		v := Values{"contact.profile_name": name, "contact.id": "."}
		if name == "%2e%2E" {
			// Escaped to %252e%252E: no dot segment.
			if got, err := fillURL("https://x.example/c/{{contact.profile_name}}", v); err != nil || got != "https://x.example/c/%252e%252E" {
				t.Errorf("%q: %q %v", name, got, err)
			}
			continue
		}
		if _, err := fillURL("https://x.example/c/{{contact.profile_name}}/edit", v); err != ErrDotSegment {
			t.Errorf("%q: %v", name, err)
		}
	}
	v := Values{"contact.id": ".", "contact.name": "..."}
	if _, err := fillURL("https://x.example/{{contact.id}}{{contact.id}}/x", v); err != ErrDotSegment {
		t.Errorf("two values making ..: %v", err)
	}
	for _, tmpl := range []string{"https://x.example/a/../{{contact.name}}", "https://x.example/v{{contact.id}}/x?q={{contact.id}}{{contact.id}}#{{contact.id}}"} {
		if _, err := fillURL(tmpl, v); err != nil {
			t.Errorf("%s: %v", tmpl, err)
		}
	}
}

func TestCheckVariablesNamesTheUnknownOne(t *testing.T) {
	t.Parallel()
	if err := checkVariables("config.url", "x {{contact.id}} {{ organization.name }} {{user.role}}"); err != nil {
		t.Fatal(err)
	}
	testfactory.WantError(t, checkVariables("config.body", `{"a": "{{contact.email}}"}`), apperr.Invalid,
		"config.body: unknown variable {{contact.email}}; the variables are {{contact.id}}")
	testfactory.WantError(t, checkVariables("config.url", "{{phone_number}}"), apperr.Invalid, "unknown variable {{phone_number}}")
}
