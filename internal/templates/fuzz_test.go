package templates

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"wharf/internal/infra/apperr"
	"wharf/models"
	"wharf/platform"
)

// FuzzPlaceholders parses and renders template texts from outside (an admin's
// definition, or the provider's at sync): a header text, a body text and a URL
// button, positional or named. Properties:
//
//   - Placeholders lists distinct identifier names, each written in the text
//     as {{name}} (spaces allowed inside the braces);
//   - rendering (Describe) replaces every occurrence and nothing else: no
//     values leave the text as it is, a value for each name leaves no
//     placeholder, values for some names leave exactly the others, and
//     values are never expanded again;
//   - a definition is either refused as invalid input (a 400, never an
//     internal error) or it is well formed (positional: {{1}}..{{n}} as
//     written, named: lowercase identifiers), validating it again changes
//     nothing, its sends need exactly one value per placeholder, Build puts
//     each value where its placeholder is (in order, named by name) and
//     names any value that is missing, and the provider's examples hold a
//     sample per placeholder.
func FuzzPlaceholders(f *testing.F) {
	for _, s := range []struct {
		header, body, url string
		named             bool
	}{
		{"", "Hi {{1}}, your order {{2}} shipped", "", false},
		{"Order {{1}}", "Hi {{1}}, order {{2}} is {{3}}", "https://shop.example/o/{{1}}", false},
		{"Hello {{name}}", "Dear {{ name }}, {{order_id}} ships {{date}}", "https://shop.example/t/{{token}}", true},
		{"", "{{1}} {{ 1 }} {{1}}", "", false},
		{"", "{{2}} then {{1}}", "", false},
		{"", "{{01}}", "", false},
		{"", "{{Name}} {{1}}", "", true},
		{"", "{{{{1}}}} {{1}", "", false},
		{"", "{{}} {{ }} {{a-b}} }}{{", "", false},
		{"", "no placeholders at all", "http://x.example/{{1}}/y", false},
		{"{{1}} {{2}}", "{{1}}", "", false},
		{"", "ünïcödé {{1}} \u00a0{{\u00a02}}", "", false},
		{"", "", "", true},
	} {
		f.Add(s.header, s.body, s.url, s.named)
	}
	f.Fuzz(func(t *testing.T, header, body, url string, named bool) {
		checkParse(t, body)
		checkRender(t, body)
		checkDefinition(t, header, body, url, named)
	})
}

// syntax is the placeholder syntax as documented (docs/MESSAGING.md).
var syntax = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

func checkParse(t *testing.T, text string) {
	names := Placeholders(text)
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			t.Fatalf("Placeholders(%q) lists %q, not an identifier", text, n)
		}
		if seen[n] {
			t.Fatalf("Placeholders(%q) lists %q twice: %q", text, n, names)
		}
		seen[n] = true
		if !regexp.MustCompile(`\{\{\s*` + n + `\s*\}\}`).MatchString(text) {
			t.Fatalf("Placeholders(%q) lists %q, which the text does not hold as {{%s}}", text, n, n)
		}
	}
	if !strings.Contains(text, "{{") && len(names) > 0 {
		t.Fatalf("Placeholders(%q) = %q from a text without {{", text, names)
	}
}

func checkRender(t *testing.T, text string) {
	tmpl := &models.Template{Name: "t", Components: models.JSON[[]map[string]any]{V: []map[string]any{{"type": "BODY", "text": text}}}}
	names := Placeholders(text)
	if got := Describe(tmpl, nil); got != text {
		t.Fatalf("Describe without values changed %q into %q", text, got)
	}
	// Marks hold a character no placeholder can contain, so a rendered
	// text can hold no placeholder made of a value.
	mark := func(n string) string { return "‹" + n + "›" }
	all := map[string]string{}
	for _, n := range names {
		all[n] = mark(n)
	}
	out := Describe(tmpl, all)
	if left := Placeholders(out); len(left) > 0 {
		t.Fatalf("Describe(%q) with every value left placeholders %q in %q", text, left, out)
	}
	if got, want := strings.Count(out, "‹")-strings.Count(text, "‹"), len(syntax.FindAllString(text, -1)); got != want {
		t.Fatalf("Describe(%q) put %d values in %q for %d placeholders", text, got, out, want)
	}
	// Values for the first half only: the second half stays, in order.
	some := map[string]string{}
	for _, n := range names[:len(names)/2] {
		some[n] = mark(n)
	}
	if left := Placeholders(Describe(tmpl, some)); !slices.Equal(left, names[len(names)/2:]) {
		t.Fatalf("Describe(%q) with values for %q left %q, want %q", text, names[:len(names)/2], left, names[len(names)/2:])
	}
	// A value that looks like a placeholder is text, not expanded again.
	self := map[string]string{}
	for _, n := range names {
		self[n] = "{{" + n + "}}"
	}
	if got := Placeholders(Describe(tmpl, self)); !slices.Equal(got, names) {
		t.Fatalf("Describe(%q) with {{name}} values has placeholders %q, want %q", text, got, names)
	}
}

func checkDefinition(t *testing.T, header, body, url string, named bool) {
	format := "positional"
	if named {
		format = "named"
	}
	comps := []map[string]any{{"type": "BODY", "text": body}}
	if header != "" {
		comps = append([]map[string]any{{"type": "HEADER", "format": "TEXT", "text": header}}, comps...)
	}
	if url != "" {
		comps = append(comps, map[string]any{"type": "BUTTONS", "buttons": []any{map[string]any{"type": "URL", "text": "Track", "url": url}}})
	}
	// A sample for every placeholder the texts hold, as a caller would
	// give them.
	var samples []SampleValue
	sampleOf := func(component string, i int, name string) string {
		return "sample " + component + " " + strconv.Itoa(i) + " " + name
	}
	for _, c := range []struct{ component, text string }{{"HEADER", header}, {"BODY", body}} {
		for i, n := range Placeholders(c.text) {
			sv := SampleValue{Component: c.component, Value: sampleOf(c.component, i, n)}
			if named {
				sv.ParamName = n
			} else {
				sv.Index = &[]int{i + 1}[0]
			}
			samples = append(samples, sv)
		}
	}
	samples = append(samples, SampleValue{Component: "BUTTONS", Index: &[]int{0}[0], Value: "sample-button"})

	out, err := validateComponents(comps, format, samples)
	if err != nil {
		if apperr.KindOf(err) != apperr.Invalid {
			t.Fatalf("definition refused with %v (kind %v), not as invalid input", err, apperr.KindOf(err))
		}
		return
	}
	for _, text := range []string{header, body} {
		for i, n := range Placeholders(text) {
			switch {
			case named && !namedParam.MatchString(n):
				t.Fatalf("named definition accepted with placeholder {{%s}} in %q", n, text)
			case !named && n != strconv.Itoa(i+1):
				t.Fatalf("positional definition accepted with {{%s}} as placeholder %d of %q: only {{1}}..{{n}} as written", n, i+1, text)
			}
		}
	}
	again, err := validateComponents(out, format, samples)
	if err != nil {
		t.Fatalf("a normalised definition is refused: %v (%v)", err, out)
	}
	if !equalJSONish(again, out) {
		t.Fatalf("validating a normalised definition changed it: %v then %v", out, again)
	}

	tmpl := &models.Template{Name: "t", Language: "en", ParameterFormat: format, Components: models.JSON[[]map[string]any]{V: out}}
	hps, bps := Placeholders(header), Placeholders(body)
	buttons := 0
	if url != "" && len(Placeholders(url)) > 0 {
		buttons = 1
	}
	slots := Slots(tmpl)
	if len(slots) != len(hps)+len(bps)+buttons {
		t.Fatalf("slots %+v for header %q, body %q, url %q", slots, hps, bps, url)
	}
	values := map[string]string{}
	for _, s := range slots {
		values[s.Key] = "value of " + s.Key
	}
	msg, err := Build(tmpl, values)
	if err != nil {
		t.Fatalf("Build with every value: %v", err)
	}
	params := map[string][]platform.TemplateParameter{}
	for _, c := range msg.Components {
		if c.Type == "button" {
			if c.Index != "0" || c.SubType != "url" || len(c.Parameters) != 1 || c.Parameters[0].Text != values["button_0"] {
				t.Fatalf("button component %+v", c)
			}
			continue
		}
		params[c.Type] = append(params[c.Type], c.Parameters...)
	}
	for _, c := range []struct {
		typ, prefix string
		names       []string
	}{{"header", "header_", hps}, {"body", "", bps}} {
		got := params[c.typ]
		if len(got) != len(c.names) {
			t.Fatalf("%s parameters %+v for placeholders %q", c.typ, got, c.names)
		}
		for i, n := range c.names {
			key := c.prefix + n
			if named {
				key = n
			}
			p := got[i]
			if p.Type != "text" || p.Text != values[key] || (named && p.ParameterName != n) || (!named && p.ParameterName != "") {
				t.Fatalf("%s parameter %d is %+v, want %q for {{%s}}", c.typ, i, p, values[key], n)
			}
		}
	}
	for _, s := range slots {
		short := map[string]string{}
		for k, v := range values {
			if k != s.Key {
				short[k] = v
			}
		}
		if _, err := Build(tmpl, short); apperr.KindOf(err) != apperr.Invalid || !strings.Contains(err.Error(), s.Key) {
			t.Fatalf("Build without %q: %v", s.Key, err)
		}
	}

	// The provider's examples: one sample per placeholder, in order.
	for _, c := range withExamples(out, named, samples) {
		typ := c["type"].(string)
		if typ != "BODY" && typ != "HEADER" {
			continue
		}
		ps := Placeholders(str(c["text"]))
		ex, _ := c["example"].(map[string]any)
		if len(ps) == 0 {
			if ex != nil {
				t.Fatalf("%s example %v without placeholders", typ, ex)
			}
			continue
		}
		var got []string
		key := strings.ToLower(typ) + "_text"
		switch v := ex[key].(type) {
		case [][]string:
			got = v[0]
		case []string:
			got = v
		case nil:
			for _, e := range ex[key+"_named_params"].([]map[string]string) {
				got = append(got, e["example"])
			}
		}
		want := make([]string, len(ps))
		for i, n := range ps {
			want[i] = sampleOf(typ, i, n)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s examples %q, want %q", typ, got, want)
		}
	}
}

// equalJSONish compares normalised components (maps of strings and lists).
func equalJSONish(a, b []map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for k, v := range a[i] {
			w, ok := b[i][k]
			if !ok || !equalValue(v, w) {
				return false
			}
		}
	}
	return true
}

func equalValue(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && equalJSONish([]map[string]any{x}, []map[string]any{y})
	}
	return a == b
}
