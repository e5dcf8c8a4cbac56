package customactions

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzVariableEscaping puts any value (the contact's name and the user's
// email are chosen by others) into every place a variable may stand and
// checks that it stays in its place: one path segment (or the dot-segment
// refusal), one query parameter, the fragment, one header line, one JSON
// string; the scheme and host never change; and each place gives the value
// back exactly once decoded. A template of any text is filled without
// panicking, and only known variables are replaced.
func FuzzVariableEscaping(f *testing.F) {
	for _, seed := range [][2]string{
		{"Ann", "ann@example.com"},
		{`O'Brien "Bob" & Sons / Co ?x=1#frag +1 é 日本`, "a+b@example.com"},
		{"..", "."},
		{"%2e%2E", "%2F"},
		{"a\r\nX-Injected: yes", "\x00"},
		{"{{user.email}}", "{{contact.name}}"},
		{"\xff\xfe", `\u0000"}`},
		{"", " "},
	} {
		f.Add(seed[0], seed[1], `{"n": "{{contact.name}}", "e": "{{ user.email }}", "x": "{{nope}}"}`)
	}
	f.Fuzz(func(t *testing.T, name, email, tmpl string) {
		v := Values{"contact.name": name, "user.email": email, "contact.id": "c-1"}

		// URL: the template of the user interface, the value everywhere.
		got, err := fillURL("https://crm.example:8443/c/{{contact.name}}/x?name={{contact.name}}&by={{user.email}}&id={{contact.id}}#{{contact.name}}", v)
		if errors.Is(err, ErrDotSegment) {
			if !isDotSegment(url.PathEscape(name)) {
				t.Fatalf("dot-segment refusal of %q", name)
			}
		} else {
			if err != nil {
				t.Fatalf("fillURL(%q): %v", name, err)
			}
			u, err := url.Parse(got)
			if err != nil {
				t.Fatalf("%q does not parse: %v", got, err)
			}
			if u.Scheme != "https" || u.Host != "crm.example:8443" || u.User != nil {
				t.Fatalf("the origin moved: %q", got)
			}
			segs := strings.Split(u.EscapedPath(), "/")
			if len(segs) != 4 || segs[1] != "c" || segs[3] != "x" {
				t.Fatalf("the path's shape changed: %q", u.EscapedPath())
			}
			if seg, err := url.PathUnescape(segs[2]); err != nil || seg != name {
				t.Fatalf("path segment %q gives %q, %v; want %q", segs[2], seg, err, name)
			}
			q, err := url.ParseQuery(u.RawQuery)
			if err != nil || len(q) != 3 || len(q["name"]) != 1 || q.Get("name") != name || q.Get("by") != email || q.Get("id") != "c-1" {
				t.Fatalf("query %q: %v, %v", u.RawQuery, q, err)
			}
			if u.Fragment != name {
				t.Fatalf("fragment %q gives %q", u.EscapedFragment(), u.Fragment)
			}
		}

		// Header: one line, the value without its line breaks and NULs.
		h := headerValue(fill("Token {{contact.name}}", v, headerValue))
		if strings.ContainsAny(h, "\r\n\x00") {
			t.Fatalf("header %q", h)
		}
		if want := "Token " + strings.NewReplacer("\r", "", "\n", "", "\x00", "").Replace(perByte(name)); h != want {
			t.Fatalf("header %q, want %q", h, want)
		}

		// Body: valid JSON whatever the values, each one string.
		body := fill(`{"name": "{{contact.name}}", "by": "{{ user.email }}"}`, v, jsonString)
		var got2 map[string]string
		if err := json.Unmarshal([]byte(body), &got2); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if len(got2) != 2 || got2["name"] != perByte(name) || got2["by"] != perByte(email) {
			t.Fatalf("body %q decodes to %v", body, got2)
		}

		// Any template: no panic, nothing but known variables replaced.
		out := fill(tmpl, v, jsonString)
		if !placeholder.MatchString(tmpl) && out != tmpl {
			t.Fatalf("fill changed %q without a placeholder: %q", tmpl, out)
		}
		for _, m := range placeholder.FindAllStringSubmatch(tmpl, -1) {
			if _, known := v[m[1]]; !known && !strings.Contains(out, m[0]) {
				t.Fatalf("fill replaced the unknown %s in %q: %q", m[0], tmpl, out)
			}
		}
	})
}

// perByte is s as encoding/json reads it back: each byte that is not UTF-8
// becomes U+FFFD.
func perByte(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}
