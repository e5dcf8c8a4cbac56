package templates

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"wharf/internal/infra/apperr"
	"wharf/models"
	"wharf/platform"
)

// Parameter keys callers use in template_params (and campaigns in
// variable_mapping):
//   - body placeholders: "1", "2" ... (positional) or the placeholder name
//     (parameter_format named);
//   - a header text placeholder: "header_1" (positional) or its name (named);
//   - a media header: "header_media_url";
//   - optionally, a document header's file name as the recipient sees it:
//     "header_media_filename" (not a slot: a send without it is complete);
//   - the dynamic suffix of URL button i (0-based): "button_<i>".
const (
	HeaderMediaKey    = "header_media_url"
	HeaderFilenameKey = "header_media_filename"
)

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_]+)\s*\}\}`)

// Placeholders returns the placeholder names of text in order of first
// appearance ("1", "2" or names).
func Placeholders(text string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// IsNamed reports whether the template uses named parameters.
func IsNamed(t *models.Template) bool { return strings.EqualFold(t.ParameterFormat, "named") }

// Slot is one value a send must provide.
type Slot struct {
	Key       string // the caller's key
	Component string // header, body, button
	Name      string // placeholder name (named format, and positional "1")
	Index     int    // button index
	Media     string // IMAGE, VIDEO, DOCUMENT for a media header
}

// Slots lists every value a send of t needs, in component order.
func Slots(t *models.Template) []Slot {
	named := IsNamed(t)
	var out []Slot
	for _, c := range t.Components.V {
		typ := strings.ToUpper(str(c["type"]))
		switch typ {
		case "HEADER":
			switch format := strings.ToUpper(str(c["format"])); format {
			case "IMAGE", "VIDEO", "DOCUMENT":
				out = append(out, Slot{Key: HeaderMediaKey, Component: "header", Media: format})
			default:
				for _, p := range Placeholders(str(c["text"])) {
					key := "header_" + p
					if named {
						key = p
					}
					out = append(out, Slot{Key: key, Component: "header", Name: p})
				}
			}
		case "BODY":
			for _, p := range Placeholders(str(c["text"])) {
				out = append(out, Slot{Key: p, Component: "body", Name: p})
			}
		case "BUTTONS":
			buttons, _ := c["buttons"].([]any)
			for i, b := range buttons {
				bm, _ := b.(map[string]any)
				if strings.ToUpper(str(bm["type"])) == "URL" && len(Placeholders(str(bm["url"]))) > 0 {
					out = append(out, Slot{Key: "button_" + strconv.Itoa(i), Component: "button", Index: i})
				}
			}
		}
	}
	return out
}

// Keys returns the keys of the slots.
func Keys(slots []Slot) []string {
	out := make([]string, len(slots))
	for i, s := range slots {
		out[i] = s.Key
	}
	return out
}

// Build fills the template's slots from values. Every slot must get a
// non-empty value; the error names the missing ones.
func Build(t *models.Template, values map[string]string) (platform.Template, error) {
	slots := Slots(t)
	var missing []string
	for _, s := range slots {
		if strings.TrimSpace(values[s.Key]) == "" {
			missing = append(missing, s.Key)
		}
	}
	if len(missing) > 0 {
		return platform.Template{}, apperr.Invalidf("missing template parameters: %s", strings.Join(missing, ", "))
	}
	named := IsNamed(t)
	out := platform.Template{Name: t.Name, Language: platform.TemplateLanguage{Code: t.Language}}
	byComponent := map[string]int{} // component type -> index in out.Components
	add := func(typ string, p platform.TemplateParameter) {
		i, ok := byComponent[typ]
		if !ok {
			out.Components = append(out.Components, platform.TemplateComponent{Type: typ})
			i = len(out.Components) - 1
			byComponent[typ] = i
		}
		out.Components[i].Parameters = append(out.Components[i].Parameters, p)
	}
	for _, s := range slots {
		v := values[s.Key]
		switch {
		case s.Media != "":
			m := &platform.Media{Link: v}
			p := platform.TemplateParameter{Type: strings.ToLower(s.Media)}
			switch s.Media {
			case "IMAGE":
				p.Image = m
			case "VIDEO":
				p.Video = m
			default:
				// Without a file name the recipient's app shows the
				// document untitled.
				m.Filename = strings.TrimSpace(values[HeaderFilenameKey])
				p.Document = m
			}
			add("header", p)
		case s.Component == "button":
			// Buttons are separate components, one per index.
			out.Components = append(out.Components, platform.TemplateComponent{Type: "button", SubType: "url",
				Index: strconv.Itoa(s.Index), Parameters: []platform.TemplateParameter{{Type: "text", Text: v}}})
		default:
			p := platform.TemplateParameter{Type: "text", Text: v}
			if named {
				p.ParameterName = s.Name
			}
			add(s.Component, p)
		}
	}
	return out, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Describe renders a template's text with values, for message history.
func Describe(t *models.Template, values map[string]string) string {
	for _, c := range t.Components.V {
		if strings.ToUpper(str(c["type"])) == "BODY" {
			return placeholder.ReplaceAllStringFunc(str(c["text"]), func(m string) string {
				name := placeholder.FindStringSubmatch(m)[1]
				if v, ok := values[name]; ok {
					return v
				}
				return m
			})
		}
	}
	return fmt.Sprintf("[template %s]", t.Name)
}
