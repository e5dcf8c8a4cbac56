package bulk

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"wharf/internal/infra/phone"
	"wharf/internal/integration/docframe"
)

// text answers a field's value as trimmed text ("" when unset).
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	default:
		return strings.TrimSpace(fmt.Sprint(x))
	}
}

// rowsOf answers a Table field's rows however they were given.
func rowsOf(v any) []map[string]any {
	switch x := v.(type) {
	case []map[string]any:
		return x
	case []any:
		out := make([]map[string]any, 0, len(x))
		for _, r := range x {
			if m, ok := r.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// variables reads template_variables or a recipient_data: a JSON object
// keyed by placeholder ("1", "2", ...), or a list whose items are the
// values of "1", "2", ... in order. what names it in refusals.
func variables(v any, what string) (map[string]any, error) {
	if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, docframe.Validationf("%s must be a JSON object or list", what)
		}
	}
	switch x := v.(type) {
	case nil, string:
		return map[string]any{}, nil
	case map[string]any:
		return x, nil
	case []any:
		out := make(map[string]any, len(x))
		for i, item := range x {
			out[strconv.Itoa(i+1)] = item
		}
		return out, nil
	}
	return nil, docframe.Validationf("%s must be a JSON object or list", what)
}

// recipient is one recipient as the hooks read it.
type recipient struct {
	mobile string // E.164
	name   string
	data   map[string]any
}

// readRecipients checks a table's rows: every mobile number valid (stored
// normalised to E.164), none twice, recipient_data an object or list.
func readRecipients(field string, rows []map[string]any) ([]recipient, error) {
	out := make([]recipient, 0, len(rows))
	seen := make(map[string]int, len(rows))
	for i, r := range rows {
		raw := text(r["mobile_number"])
		number, err := phone.Normalize(raw)
		if err != nil {
			return nil, docframe.Validationf("%s row %d: mobile_number %q is not a valid phone number in international format (+15551234567)", field, i+1, raw)
		}
		if first, dup := seen[number]; dup {
			return nil, docframe.Validationf("%s row %d: %s is already row %d", field, i+1, number, first)
		}
		seen[number] = i + 1
		data, err := variables(r["recipient_data"], fmt.Sprintf("%s row %d: recipient_data", field, i+1))
		if err != nil {
			return nil, err
		}
		r["mobile_number"] = number
		out = append(out, recipient{mobile: number, name: text(r["recipient_name"]), data: data})
	}
	return out, nil
}

// parseDatetime reads a stored Datetime (UTC).
func parseDatetime(v any) (*time.Time, error) {
	s := text(v)
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return &t, nil
		}
	}
	return nil, docframe.Validationf("scheduled_time %q is not a date and time", s)
}

// attachment reads the attach field: the link of the template's media
// header, which the provider fetches itself, so it must be an absolute
// http(s) URL; filename is its last path element (a document header's
// name as the recipient sees it). "" when unset.
func attachment(v any) (link, filename string, err error) {
	link = text(v)
	if link == "" {
		return "", "", nil
	}
	u, perr := url.Parse(link)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", docframe.Validationf("attach %q must be an absolute http(s) URL: the provider fetches the file itself", link)
	}
	if base := path.Base(u.Path); base != "." && base != "/" {
		filename = base
	}
	return link, filename, nil
}
