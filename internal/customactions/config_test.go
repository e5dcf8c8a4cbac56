package customactions

import (
	"reflect"
	"testing"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/internal/testfactory"
)

var lax = safehttp.Policy{AllowPrivate: true}

func TestNormalizeFillsDefaultsAndKeepsTheTypesKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ  string
		in   map[string]any
		want map[string]any
	}{
		{"webhook", map[string]any{"url": " https://x.example/h ", "code": "dropped"},
			map[string]any{"url": "https://x.example/h", "method": "POST", "headers": map[string]any{}, "body": ""}},
		{"webhook", map[string]any{"url": "http://x.example/{{contact.id}}", "method": "patch", "headers": map[string]any{"X-Id": "{{user.id}}"},
			"body": `{"n": "{{contact.name}}"}`},
			map[string]any{"url": "http://x.example/{{contact.id}}", "method": "PATCH", "headers": map[string]any{"X-Id": "{{user.id}}"},
				"body": `{"n": "{{contact.name}}"}`}},
		{"url", map[string]any{"url": "https://crm.example/?q={{contact.phone_number}}", "method": "GET"},
			map[string]any{"url": "https://crm.example/?q={{contact.phone_number}}", "open_in_new_tab": true}},
		{"url", map[string]any{"url": "https://crm.example/", "open_in_new_tab": false},
			map[string]any{"url": "https://crm.example/", "open_in_new_tab": false}},
		{"javascript", map[string]any{"code": "alert(context.contact.name)", "url": "dropped"},
			map[string]any{"code": "alert(context.contact.name)"}},
	} {
		got, err := normalize(c.typ, c.in, lax)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %v: %v, %v; want %v", c.typ, c.in, got, err, c.want)
		}
	}
}

func TestNormalizeRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ  string
		in   map[string]any
		want string
	}{
		{"webhook", nil, "config is required"},
		{"webhook", map[string]any{}, "config.url is required"},
		{"webhook", map[string]any{"url": 12}, "config.url must be a string"},
		{"webhook", map[string]any{"url": "ftp://x.example/"}, "config.url must be an http or https URL"},
		{"webhook", map[string]any{"url": "javascript:alert(1)"}, "config.url must be an http or https URL"},
		{"webhook", map[string]any{"url": "x.example/hook"}, "config.url must be an http or https URL"},
		{"webhook", map[string]any{"url": "https://u:p@x.example/"}, "config.url must not contain credentials"},
		{"webhook", map[string]any{"url": "https://{{contact.name}}.example/"}, "not in the scheme or host"},
		{"webhook", map[string]any{"url": "https://x.example/{{contact.nickname}}"}, "unknown variable {{contact.nickname}}"},
		{"webhook", map[string]any{"url": "https://x.example/", "method": "DELETE"}, "config.method must be one of POST, GET, PUT, PATCH"},
		{"webhook", map[string]any{"url": "https://x.example/", "headers": []any{"a"}}, "config.headers must be an object of strings"},
		{"webhook", map[string]any{"url": "https://x.example/", "headers": map[string]any{"X-N": 1}}, "config.headers must be an object of strings"},
		{"webhook", map[string]any{"url": "https://x.example/", "headers": map[string]any{"Bad Name": "x"}}, "is not a valid header name"},
		{"webhook", map[string]any{"url": "https://x.example/", "headers": map[string]any{"Host": "x"}}, "Host is set by the service"},
		{"webhook", map[string]any{"url": "https://x.example/", "headers": map[string]any{"X-A": "a\r\nX-B: b"}}, "contains a line break"},
		{"webhook", map[string]any{"url": "https://x.example/", "headers": map[string]any{"X-A": "{{user.password}}"}}, "unknown variable {{user.password}}"},
		{"webhook", map[string]any{"url": "https://x.example/", "body": 5}, "config.body must be a string"},
		{"webhook", map[string]any{"url": "https://x.example/", "body": `{"a": `}, "config.body must be a JSON template"},
		{"webhook", map[string]any{"url": "https://x.example/", "body": `{"id": {{contact.id}}}`}, "config.body must be a JSON template"},
		{"webhook", map[string]any{"url": "https://x.example/", "body": `{"a": "{{contact.nick}}"}`}, "unknown variable {{contact.nick}}"},
		{"webhook", map[string]any{"url": "https://x.example/", "method": "GET", "body": `{}`}, "a GET webhook sends no body"},
		{"url", map[string]any{"url": ""}, "config.url is required"},
		{"url", map[string]any{"url": "data:text/html,hi"}, "config.url must be an http or https URL"},
		{"url", map[string]any{"url": "https://x.example/", "open_in_new_tab": "yes"}, "config.open_in_new_tab must be a boolean"},
		{"javascript", map[string]any{}, "config.code is required for a javascript action"},
		{"javascript", map[string]any{"code": "  "}, "config.code is required for a javascript action"},
		{"javascript", map[string]any{"code": true}, "config.code must be a string"},
		{"macro", map[string]any{"code": "x"}, "action_type must be one of webhook, url, javascript"},
	} {
		_, err := normalize(c.typ, c.in, lax)
		testfactory.WantError(t, err, apperr.Invalid, c.want)
	}
}

// On a strict instance a webhook's target must be a public address when
// it is saved (and again when it runs); a URL action is opened by the
// browser, so an intranet address is fine for it.
func TestNormalizeHoldsWebhooksToTheAddressRule(t *testing.T) {
	t.Parallel()
	strict := safehttp.Policy{}
	for _, u := range []string{"http://127.0.0.1:8080/hook", "http://localhost/x", "http://10.0.0.5/{{contact.id}}", "http://169.254.169.254/"} {
		_, err := normalize("webhook", map[string]any{"url": u}, strict)
		testfactory.WantError(t, err, apperr.Invalid, "config.url: the address is not allowed")
	}
	if _, err := normalize("webhook", map[string]any{"url": "http://10.0.0.5/x"}, lax); err != nil {
		t.Fatal(err)
	}
	if _, err := normalize("url", map[string]any{"url": "http://10.0.0.5/crm?c={{contact.id}}"}, strict); err != nil {
		t.Fatal(err)
	}
}
