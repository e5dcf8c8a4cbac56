package customactions

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"wharf/internal/infra/apperr"
)

// Variables are the names an action's URL, headers and body may use as
// {{name}}: the contact it runs for, the user who runs it and their
// organization.
var Variables = []string{
	"contact.id", "contact.phone_number", "contact.name", "contact.profile_name",
	"user.id", "user.name", "user.email", "user.role",
	"organization.id", "organization.name",
}

// placeholder is what looks like a variable: {{ a.b }}, spaces allowed
// inside the braces. Other text with braces ({{ "x" }}, a lone {{) is not
// a variable and is sent as written.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}`)

// Values are the variables' values for one run.
type Values map[string]string

// sampleValues stand in for the real values when a template is checked at
// save time. They hold the characters each escaping must handle (quotes,
// a backslash, a slash, an ampersand, spaces, a line break), so that a
// body that is valid JSON with them is valid with any value.
func sampleValues() Values {
	v := Values{}
	for _, name := range Variables {
		v[name] = `sample "value" \ / & ? # = +` + "\n" + `é`
	}
	return v
}

// checkVariables refuses placeholders that name no variable: a misspelt
// variable would otherwise be sent as typed, or silently as nothing.
func checkVariables(field, text string) error {
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(Variables, m[1]) {
			return apperr.Invalidf("%s: unknown variable {{%s}}; the variables are %s", field, m[1], variableList())
		}
	}
	return nil
}

func variableList() string {
	names := make([]string, len(Variables))
	for i, n := range Variables {
		names[i] = "{{" + n + "}}"
	}
	return strings.Join(names, ", ")
}

// fill replaces each variable with its value passed through escape.
// Placeholders are checked at save time, so an unknown one cannot occur;
// it would be left as written.
func fill(text string, v Values, escape func(string) string) string {
	if !strings.Contains(text, "{{") {
		return text
	}
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		val, ok := v[placeholder.FindStringSubmatch(m)[1]]
		if !ok {
			return m
		}
		return escape(val)
	})
}

// jsonString escapes s as the inside of a JSON string (without the
// quotes): a value placed between quotes in a body keeps the body valid
// JSON whatever it contains.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// headerValue strips what would end a header line or the header block:
// a value cannot add a header or smuggle a body.
func headerValue(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == 0 {
			return -1
		}
		return r
	}, s)
}

// fillURL fills a URL template: values are path-escaped in the path and
// the fragment and query-escaped in the query, so a value can neither add
// a path segment nor a query parameter. The scheme and host take no
// variables (checked at save time): the target is fixed when the action
// is saved.
//
// Escaping leaves dots alone, and a segment that is "." or ".." moves up
// the path at the target (and in browsers, which treat %2e as a dot too).
// A value that makes a whole segment one of those is refused
// (ErrDotSegment): a contact's profile name is chosen by the contact.
func fillURL(tmpl string, v Values) (string, error) {
	origin, rest := splitOrigin(tmpl)
	rest, fragment, hasFragment := strings.Cut(rest, "#")
	path, query, hasQuery := strings.Cut(rest, "?")
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		segs[i] = fill(seg, v, url.PathEscape)
		if segs[i] != seg && isDotSegment(segs[i]) {
			return "", ErrDotSegment
		}
	}
	out := origin + strings.Join(segs, "/")
	if hasQuery {
		out += "?" + fill(query, v, url.QueryEscape)
	}
	if hasFragment {
		out += "#" + fill(fragment, v, url.PathEscape)
	}
	return out, nil
}

// ErrDotSegment is a value that would make a path segment "." or "..".
var ErrDotSegment = errors.New("a value would make a path segment . or ..")

func isDotSegment(s string) bool {
	s = strings.ReplaceAll(strings.ToLower(s), "%2e", ".")
	return s == "." || s == ".."
}

// splitOrigin cuts a URL into its scheme and authority, and the rest (the
// path, query and fragment).
func splitOrigin(raw string) (origin, rest string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", raw
	}
	j := strings.IndexAny(raw[i+3:], "/?#")
	if j < 0 {
		return raw, ""
	}
	return raw[:i+3+j], raw[i+3+j:]
}
