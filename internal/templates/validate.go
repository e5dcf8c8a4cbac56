package templates

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"wharf/internal/infra/apperr"
)

// Template rules (the provider's, checked before anything is submitted).
var (
	nameFormat     = regexp.MustCompile(`^[a-z0-9_]{1,512}$`)
	languageFormat = regexp.MustCompile(`^[a-z]{2,3}(_[A-Z]{2})?$`)
	namedParam     = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	Categories     = []string{"MARKETING", "UTILITY", "AUTHENTICATION"}
	headerFormats  = []string{"TEXT", "IMAGE", "VIDEO", "DOCUMENT"}
	buttonTypes    = []string{"URL", "QUICK_REPLY", "PHONE_NUMBER"}
)

// Text limits of the components.
const (
	maxBodyText   = 1024
	maxHeaderText = 60
	maxFooterText = 60
	maxButtonText = 25
	maxButtons    = 10
)

// SampleValue is an example for one placeholder: positional by Index, named
// by ParamName; for a URL button Index is the button's position, and for a
// media header the sample is a link to an example file.
type SampleValue struct {
	Component string `json:"component"`
	Index     *int   `json:"index,omitempty"`
	ParamName string `json:"param_name,omitempty"`
	Value     string `json:"value"`
}

// need is one sample value a template requires.
type need struct {
	component string // HEADER, BODY, BUTTONS
	index     int    // positional index, or button position
	name      string // named parameter
	media     bool   // a media header's example
}

func (n need) String() string {
	switch {
	case n.media:
		return "HEADER media example"
	case n.component == "BUTTONS":
		return fmt.Sprintf("BUTTONS[%d] url", n.index)
	case n.name != "":
		return fmt.Sprintf("%s {{%s}}", n.component, n.name)
	}
	return fmt.Sprintf("%s {{%d}}", n.component, n.index)
}

func (n need) matches(sv SampleValue) bool {
	if !strings.EqualFold(sv.Component, n.component) && !(n.component == "BUTTONS" && strings.EqualFold(sv.Component, "BUTTON")) {
		return false
	}
	switch {
	case n.media:
		return true
	case n.name != "" && n.component != "BUTTONS":
		return sv.ParamName == n.name
	}
	return sv.Index != nil && *sv.Index == n.index
}

// validate checks a template's definition and its sample values, and returns
// the normalised components. Every placeholder needs a sample value; the
// error names the missing ones.
func validate(name, language, category string, components []map[string]any, format string, samples []SampleValue) ([]map[string]any, error) {
	if !nameFormat.MatchString(name) {
		return nil, apperr.Invalidf("name must be lowercase letters, digits and underscores")
	}
	if !languageFormat.MatchString(language) {
		return nil, apperr.Invalidf("language must be a language code such as en or en_US")
	}
	if !slices.Contains(Categories, category) {
		return nil, apperr.Invalidf("category must be one of %s", strings.Join(Categories, ", "))
	}
	return validateComponents(components, format, samples)
}

func validateComponents(components []map[string]any, format string, samples []SampleValue) ([]map[string]any, error) {
	if format != "named" && format != "positional" {
		return nil, apperr.Invalidf("parameter_format must be named or positional")
	}
	named := format == "named"
	if len(components) == 0 {
		return nil, apperr.Invalidf("components are required (at least a BODY)")
	}
	var needs []need
	seen := map[string]bool{}
	out := make([]map[string]any, 0, len(components))
	for i, c := range components {
		typ := strings.ToUpper(str(c["type"]))
		if seen[typ] {
			return nil, apperr.Invalidf("component %s appears twice", typ)
		}
		seen[typ] = true
		nc := map[string]any{"type": typ}
		switch typ {
		case "HEADER":
			f := strings.ToUpper(str(c["format"]))
			if f == "" {
				f = "TEXT"
			}
			if !slices.Contains(headerFormats, f) {
				return nil, apperr.Invalidf("HEADER format must be one of %s", strings.Join(headerFormats, ", "))
			}
			nc["format"] = f
			if f == "TEXT" {
				text := str(c["text"])
				if text == "" || len([]rune(text)) > maxHeaderText {
					return nil, apperr.Invalidf("HEADER text is required (at most %d characters)", maxHeaderText)
				}
				ps, err := placeholdersOf("HEADER", text, named)
				if err != nil {
					return nil, err
				}
				if len(ps) > 1 {
					return nil, apperr.Invalidf("HEADER text can have at most one placeholder")
				}
				needs = append(needs, ps...)
				nc["text"] = text
			} else {
				needs = append(needs, need{component: "HEADER", media: true})
			}
		case "BODY":
			text := str(c["text"])
			if text == "" || len([]rune(text)) > maxBodyText {
				return nil, apperr.Invalidf("BODY text is required (at most %d characters)", maxBodyText)
			}
			ps, err := placeholdersOf("BODY", text, named)
			if err != nil {
				return nil, err
			}
			needs = append(needs, ps...)
			nc["text"] = text
		case "FOOTER":
			text := str(c["text"])
			if text == "" || len([]rune(text)) > maxFooterText {
				return nil, apperr.Invalidf("FOOTER text is required (at most %d characters)", maxFooterText)
			}
			if len(Placeholders(text)) > 0 {
				return nil, apperr.Invalidf("FOOTER text cannot have placeholders")
			}
			nc["text"] = text
		case "BUTTONS":
			buttons, _ := c["buttons"].([]any)
			if len(buttons) == 0 || len(buttons) > maxButtons {
				return nil, apperr.Invalidf("BUTTONS must have 1 to %d buttons", maxButtons)
			}
			var nb []any
			for j, b := range buttons {
				bm, _ := b.(map[string]any)
				bt := strings.ToUpper(str(bm["type"]))
				text := str(bm["text"])
				if !slices.Contains(buttonTypes, bt) {
					return nil, apperr.Invalidf("button %d: type must be one of %s", j, strings.Join(buttonTypes, ", "))
				}
				if text == "" || len([]rune(text)) > maxButtonText {
					return nil, apperr.Invalidf("button %d: text is required (at most %d characters)", j, maxButtonText)
				}
				btn := map[string]any{"type": bt, "text": text}
				switch bt {
				case "URL":
					u := str(bm["url"])
					if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
						return nil, apperr.Invalidf("button %d: url must be an http(s) URL", j)
					}
					if ps := Placeholders(u); len(ps) > 1 || (len(ps) == 1 && !strings.HasSuffix(u, "}}")) {
						return nil, apperr.Invalidf("button %d: url can have one placeholder, at its end", j)
					} else if len(ps) == 1 {
						needs = append(needs, need{component: "BUTTONS", index: j})
					}
					btn["url"] = u
				case "PHONE_NUMBER":
					pn := str(bm["phone_number"])
					if pn == "" {
						return nil, apperr.Invalidf("button %d: phone_number is required", j)
					}
					btn["phone_number"] = pn
				}
				nb = append(nb, btn)
			}
			nc["buttons"] = nb
		default:
			return nil, apperr.Invalidf("component %d: type must be HEADER, BODY, FOOTER or BUTTONS", i)
		}
		out = append(out, nc)
	}
	if !seen["BODY"] {
		return nil, apperr.Invalidf("a BODY component is required")
	}
	var missing []string
	for _, n := range needs {
		if !slices.ContainsFunc(samples, func(sv SampleValue) bool { return n.matches(sv) && strings.TrimSpace(sv.Value) != "" }) {
			missing = append(missing, n.String())
		}
	}
	if len(missing) > 0 {
		return nil, apperr.Invalidf("sample values are required for: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// placeholdersOf lists a text's placeholders as needs, checking they match
// the parameter format: positional ones are {{1}}..{{n}} without gaps, named
// ones lowercase identifiers.
func placeholdersOf(component, text string, named bool) ([]need, error) {
	var out []need
	ps := Placeholders(text)
	for i, p := range ps {
		n, err := strconv.Atoi(p)
		switch {
		case named && err == nil:
			return nil, apperr.Invalidf("%s uses {{%s}}: named templates take {{name}} placeholders", component, p)
		case named && !namedParam.MatchString(p):
			return nil, apperr.Invalidf("%s placeholder {{%s}}: names are lowercase letters, digits and underscores", component, p)
		case named:
			out = append(out, need{component: component, name: p})
		case err != nil:
			return nil, apperr.Invalidf("%s uses {{%s}}: positional templates take {{1}}, {{2}}...; set parameter_format to named for names", component, p)
		case n != i+1 || p != strconv.Itoa(n): // {{01}} is no {{1}} to the provider
			return nil, apperr.Invalidf("%s placeholders must be numbered {{1}} to {{%d}} in order", component, len(ps))
		default:
			out = append(out, need{component: component, index: n})
		}
	}
	return out, nil
}

// withExamples adds the provider's `example` blocks, built from the sample
// values, to a copy of the components.
func withExamples(components []map[string]any, named bool, samples []SampleValue) []map[string]any {
	sample := func(n need) string {
		for _, sv := range samples {
			if n.matches(sv) {
				return sv.Value
			}
		}
		return ""
	}
	out := make([]map[string]any, len(components))
	for i, c := range components {
		nc := map[string]any{}
		for k, v := range c {
			nc[k] = v
		}
		typ := str(c["type"])
		switch typ {
		case "HEADER", "BODY":
			if typ == "HEADER" && str(c["format"]) != "TEXT" {
				nc["example"] = map[string]any{"header_handle": []string{sample(need{component: "HEADER", media: true})}}
				break
			}
			ps, _ := placeholdersOf(typ, str(c["text"]), named)
			if len(ps) == 0 {
				break
			}
			key := strings.ToLower(typ) + "_text"
			if named {
				var ex []map[string]string
				for _, p := range ps {
					ex = append(ex, map[string]string{"param_name": p.name, "example": sample(p)})
				}
				nc["example"] = map[string]any{key + "_named_params": ex}
			} else {
				vals := make([]string, len(ps))
				for j, p := range ps {
					vals[j] = sample(p)
				}
				if typ == "BODY" {
					nc["example"] = map[string]any{key: [][]string{vals}}
				} else {
					nc["example"] = map[string]any{key: vals}
				}
			}
		case "BUTTONS":
			buttons, _ := c["buttons"].([]any)
			nb := make([]any, len(buttons))
			for j, b := range buttons {
				bm, _ := b.(map[string]any)
				cp := map[string]any{}
				for k, v := range bm {
					cp[k] = v
				}
				if str(bm["type"]) == "URL" && len(Placeholders(str(bm["url"]))) == 1 {
					cp["example"] = []string{sample(need{component: "BUTTONS", index: j})}
				}
				nb[j] = cp
			}
			nc["buttons"] = nb
		}
		out[i] = nc
	}
	return out
}

// CheckDefinition applies Create's checks to a definition without storing
// or submitting anything (the framework integration refuses a Platform
// Template that the provider submission would refuse, before it is stored).
func CheckDefinition(name, language, category string, components []map[string]any, format string, samples []SampleValue) error {
	_, err := validate(strings.TrimSpace(name), strings.TrimSpace(language), strings.ToUpper(strings.TrimSpace(category)), components,
		normalizeFormat(format), samples)
	return err
}
