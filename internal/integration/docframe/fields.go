package docframe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Field types (Frappe's names). Layout types carry no value; they are
// accepted so that DocType definitions written for Frappe load unchanged.
const (
	TypeData        = "Data"
	TypeSmallText   = "Small Text"
	TypeText        = "Text"
	TypeLongText    = "Long Text"
	TypeInt         = "Int"
	TypeFloat       = "Float"
	TypeCurrency    = "Currency"
	TypeCheck       = "Check"
	TypeDate        = "Date"
	TypeDatetime    = "Datetime"
	TypeSelect      = "Select"
	TypeLink        = "Link"
	TypeDynamicLink = "Dynamic Link"
	TypeJSON        = "JSON"
	TypePassword    = "Password"
	TypeAttach      = "Attach"
	TypeTable       = "Table"
)

// kind is how a field's value is stored, compared and indexed.
type kind int

const (
	kindNone     kind = iota // layout: no value
	kindText                 // JSON string, compared as text
	kindInt                  // JSON integer, compared as numeric
	kindFloat                // JSON number, compared as numeric
	kindDate                 // 'YYYY-MM-DD', compared as text in the C collation (= date order)
	kindDatetime             // 'YYYY-MM-DD HH:MM:SS[.ffffff]', likewise
	kindJSON                 // any JSON value, compared as its text
	kindPassword             // sealed in the secrets column; never compared
	kindTable                // child rows; never compared
)

var fieldKinds = map[string]kind{
	TypeData: kindText, TypeSmallText: kindText, TypeText: kindText, TypeLongText: kindText,
	TypeInt: kindInt, TypeCheck: kindInt, TypeFloat: kindFloat, TypeCurrency: kindFloat,
	TypeDate: kindDate, TypeDatetime: kindDatetime,
	TypeSelect: kindText, TypeLink: kindText, TypeDynamicLink: kindText, TypeAttach: kindText,
	TypeJSON: kindJSON, TypePassword: kindPassword, TypeTable: kindTable,
	"Section Break": kindNone, "Column Break": kindNone, "Tab Break": kindNone, "HTML": kindNone, "Heading": kindNone,
}

// FieldTypes lists the field types a DocType may use.
func FieldTypes() []string {
	out := make([]string, 0, len(fieldKinds))
	for t := range fieldKinds {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Field is one field of a DocType (Frappe's DocField).
type Field struct {
	Fieldname   string     `json:"fieldname"`
	Label       string     `json:"label,omitempty"`
	Fieldtype   string     `json:"fieldtype"`
	Options     string     `json:"options,omitempty"`
	Reqd        Flag       `json:"reqd"`
	Unique      Flag       `json:"unique"`
	Default     FlexString `json:"default,omitempty"`
	InListView  Flag       `json:"in_list_view"`
	SearchIndex Flag       `json:"search_index"`
	Hidden      Flag       `json:"hidden"`
	ReadOnly    Flag       `json:"read_only"`
	Description string     `json:"description,omitempty"`
}

func (f *Field) kind() kind { return fieldKinds[f.Fieldtype] }

// label is how messages name the field: its label and its fieldname.
func (f *Field) label() string {
	if f.Label == "" || f.Label == f.Fieldname {
		return f.Fieldname
	}
	return f.Label + " (" + f.Fieldname + ")"
}

// selectOptions are a Select's choices, one per line of Options.
func (f *Field) selectOptions() []string {
	var out []string
	for _, o := range strings.Split(f.Options, "\n") {
		out = append(out, strings.TrimSpace(o))
	}
	return out
}

// Flag is Frappe's 0/1 property; it decodes from 0/1, true/false and "0"/"1"
// (clients send all three) and encodes as 0 or 1.
type Flag int

// UnmarshalJSON accepts numbers, booleans, numeric strings and null.
func (f *Flag) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	switch s {
	case "true", "1":
		*f = 1
	case "false", "0", "", "null":
		*f = 0
	default:
		return fmt.Errorf("must be 0 or 1, not %s", b)
	}
	return nil
}

// On reports whether the flag is set.
func (f Flag) On() bool { return f != 0 }

func flag(b bool) Flag {
	if b {
		return 1
	}
	return 0
}

// FlexString is a text property that clients may send as a number or a
// boolean (a field's default: 0 for a Check).
type FlexString string

// UnmarshalJSON takes strings as they are and any other scalar as its JSON text.
func (s *FlexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = FlexString(v)
	case string(b) == "null":
		*s = ""
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return fmt.Errorf("must be text, not %s", b)
	default:
		*s = FlexString(b)
	}
	return nil
}

// Date and time formats of stored values: text order is time order.
const (
	dateLayout     = "2006-01-02"
	datetimeLayout = "2006-01-02 15:04:05"
)

var (
	dateRE     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	datetimeRE = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})?$`)
)

// coerce turns a client's value into the stored form of field f: strings
// for text, int64 for Int and Check, float64 for Float and Currency,
// normalised text for Date and Datetime, any JSON value for JSON. Empty and
// null values are nil (not set). Tables are coerced by the document.
func coerce(f *Field, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(string); ok && s == "" && f.kind() != kindText && f.kind() != kindPassword {
		return nil, nil
	}
	bad := func(want string) error {
		return Validationf("%s must be %s, not %s", f.label(), want, show(v))
	}
	switch f.kind() {
	case kindText, kindPassword:
		switch x := v.(type) {
		case string:
			if x == "" {
				return nil, nil
			}
			return x, nil
		case json.Number:
			return x.String(), nil
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case int:
			return strconv.Itoa(x), nil
		}
		return nil, bad("text")
	case kindInt:
		n, ok := toInt(v)
		if !ok {
			if f.Fieldtype == TypeCheck {
				return nil, bad("0 or 1")
			}
			return nil, bad("a whole number")
		}
		if f.Fieldtype == TypeCheck && n != 0 && n != 1 {
			return nil, bad("0 or 1")
		}
		return n, nil
	case kindFloat:
		x, ok := toFloat(v)
		if !ok {
			return nil, bad("a number")
		}
		return x, nil
	case kindDate:
		s, ok := v.(string)
		if !ok {
			return nil, bad("a date (YYYY-MM-DD)")
		}
		d, err := normalizeDate(s)
		if err != nil {
			return nil, bad("a date (YYYY-MM-DD)")
		}
		return d, nil
	case kindDatetime:
		s, ok := v.(string)
		if !ok {
			return nil, bad("a date and time (YYYY-MM-DD HH:MM:SS)")
		}
		d, err := normalizeDatetime(s)
		if err != nil {
			return nil, bad("a date and time (YYYY-MM-DD HH:MM:SS)")
		}
		return d, nil
	case kindJSON:
		if s, ok := v.(string); ok {
			var parsed any
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			if dec.Decode(&parsed) == nil && !dec.More() {
				if _, isObj := parsed.(map[string]any); isObj {
					return parsed, nil
				}
				if _, isArr := parsed.([]any); isArr {
					return parsed, nil
				}
			}
		}
		return v, nil
	}
	return nil, nil
}

// toInt reads a whole number from a JSON number, a numeric string or a
// boolean.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case json.Number:
		return toInt(string(x))
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, false
		}
		return int64(x), true
	case string:
		s := strings.TrimSpace(x)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return toInt(f)
		}
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case json.Number:
		return toFloat(string(x))
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// normalizeDate accepts YYYY-MM-DD (and a date-time, whose date it keeps).
func normalizeDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	if m := datetimeRE.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	if !dateRE.MatchString(s) {
		return "", fmt.Errorf("not a date")
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return "", err
	}
	return t.Format(dateLayout), nil
}

// normalizeDatetime accepts 'YYYY-MM-DD HH:MM[:SS][.ffffff]', the same with
// a T, RFC 3339 with a zone (converted to UTC: stored date-times are UTC,
// like the service's timestamps) and a bare date (midnight). Fractions are
// kept to the microsecond, with six digits, so that text order stays time
// order.
func normalizeDatetime(s string) (string, error) {
	s = strings.TrimSpace(s)
	if dateRE.MatchString(s) {
		d, err := normalizeDate(s)
		return d + " 00:00:00", err
	}
	m := datetimeRE.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("not a date-time")
	}
	clock := m[2]
	if len(clock) == 5 {
		clock += ":00"
	}
	frac := m[3]
	layout := "2006-01-02 15:04:05"
	text := m[1] + " " + clock + frac
	if frac != "" {
		layout += "." + strings.Repeat("9", len(frac)-1)
	}
	var t time.Time
	var err error
	if zone := m[4]; zone != "" {
		if zone != "Z" && !strings.Contains(zone, ":") {
			zone = zone[:3] + ":" + zone[3:]
		}
		t, err = time.Parse(layout+"Z07:00", text+zone)
	} else {
		t, err = time.Parse(layout, text)
	}
	if err != nil {
		return "", err
	}
	return formatDatetime(t), nil
}

// formatDatetime renders a stored date-time: seconds, and microseconds
// (six digits) when there are any.
func formatDatetime(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format(datetimeLayout)
	}
	return t.Format("2006-01-02 15:04:05.000000")
}

// show quotes a value for a message, shortened.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
