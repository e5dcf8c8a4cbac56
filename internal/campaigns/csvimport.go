package campaigns

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/dataops"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/templates"
	"wharf/models"
)

// MaxCSVBytes bounds a recipients file: 100,000 rows of a number, a name
// and a few values are about 5 MB; the rest is room for the columns a
// spreadsheet carries along that no mapping uses.
const MaxCSVBytes = 32 << 20

// csvLimits are those of an /api/import file (200 columns, 64 KB a line,
// the same parser and row numbers) with a campaign's size and row bounds.
var csvLimits = dataops.CSVLimits{MaxBytes: MaxCSVBytes, MaxRows: MaxImport}

// CSVPreviewRows and CSVMaxProblems bound a check's answer: the first rows
// shown, and the first problem rows listed (all are counted).
const (
	CSVPreviewRows = 5
	CSVMaxProblems = 100
)

// CSVMapping says where a recipient's values come from in a CSV file:
// the column of the phone number, optionally a column of the name, and for
// each placeholder of the template (its variable_mapping key: "1",
// "header_1", "button_0", "header_media_url" or a named parameter) a
// column or a fixed value. Columns are named by their header; only mapped
// columns are stored.
type CSVMapping struct {
	PhoneNumber  string              `json:"phone_number" description:"The header of the column holding the phone numbers."`
	Name         string              `json:"name,omitempty" description:"The header of a column holding the recipients' names (optional)."`
	Placeholders map[string]CSVValue `json:"placeholders" description:"For each placeholder key of the template: {\"column\": header} or {\"value\": fixed text}."`
}

// CSVValue is a placeholder's source: a column, or a fixed value for
// every recipient. Exactly one is set.
type CSVValue struct {
	Column string `json:"column,omitempty"`
	Value  string `json:"value,omitempty"`
}

// CSVProblem is a row that cannot become a recipient.
type CSVProblem struct {
	Row     int    `json:"row"`     // as /api/import numbers rows: the header is row 1
	Message string `json:"message"` // the column and what is wrong with the cell
}

// CSVCheck is what a file becomes under a mapping: its shape, a preview,
// and the rows that cannot be imported. Import refuses a file whose check
// has problems or placeholders without a value; the dry run answers it.
type CSVCheck struct {
	Columns []string
	Rows    int // data rows (blank ones left out)
	Preview []dataops.CSVRow
	// Mapping is the one checked: the caller's, or, when it gave none, one
	// proposed from the headers.
	Mapping CSVMapping
	// Unmapped lists the template's placeholders the mapping gives no value.
	Unmapped []string
	// Recipients counts the rows that would be imported: a valid number,
	// not one an earlier row has.
	Recipients int
	Duplicates int
	Invalid    int          // rows with a problem
	Problems   []CSVProblem // the first CSVMaxProblems of them

	rows []models.CampaignRecipient
}

// DataField is the recipient data field a placeholder's value is stored
// in: the placeholder's key (LaunchTx's convention), but for the two keys
// variable_mapping reads from the recipient itself.
func DataField(key string) string {
	if slices.Contains(builtinFields, key) {
		return "placeholder_" + key
	}
	return key
}

// CheckCSV reads a recipients file and checks it under mapping (nil: one
// proposed from the headers) for the placeholders of t (nil: no template
// yet, so none are required and none refused). The file's own errors (size,
// width, rows, CSV) and a mapping that names what the file or the template
// does not have are errors; rows without a valid number and mapped cells
// left empty are problems of the check.
func CheckCSV(data []byte, mapping *CSVMapping, t *models.Template) (*CSVCheck, error) {
	f, err := dataops.ParseCSV(data, csvLimits)
	if err != nil {
		return nil, err
	}
	var slots []string
	if t != nil {
		slots = templates.Keys(templates.Slots(t))
	}
	out := &CSVCheck{Columns: f.Header, Rows: len(f.Rows), Preview: f.Rows[:min(CSVPreviewRows, len(f.Rows))]}
	if mapping == nil {
		out.Mapping = propose(f.Header, slots)
	} else {
		out.Mapping = *mapping
	}
	m := &out.Mapping
	if m.Placeholders == nil {
		m.Placeholders = map[string]CSVValue{}
	}
	col := func(what, header string) (int, error) {
		i := slices.Index(f.Header, strings.TrimSpace(header))
		switch {
		case i < 0:
			return 0, apperr.Invalidf("mapping.%s names column %q, which the file does not have (columns: %s)", what, header, strings.Join(f.Header, ", "))
		case slices.Contains(f.Header[i+1:], f.Header[i]):
			return 0, apperr.Invalidf("mapping.%s names column %q, which the file has twice: give the columns different headers", what, header)
		}
		return i, nil
	}
	if strings.TrimSpace(m.PhoneNumber) == "" {
		return nil, apperr.Invalidf("mapping.phone_number is required: the header of the column with the phone numbers")
	}
	phoneCol, err := col("phone_number", m.PhoneNumber)
	if err != nil {
		return nil, err
	}
	nameCol := -1
	if strings.TrimSpace(m.Name) != "" {
		if nameCol, err = col("name", m.Name); err != nil {
			return nil, err
		}
	}
	type source struct {
		key, field string
		col        int // -1: the fixed value
		value      string
	}
	var sources []source
	keys := make([]string, 0, len(m.Placeholders))
	for k := range m.Placeholders {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m.Placeholders[k]
		if t != nil && !slices.Contains(slots, k) {
			return nil, apperr.Invalidf("mapping.placeholders names %q, which is not a placeholder of template %s (placeholders: %s)",
				k, t.Name, strings.Join(slots, ", "))
		}
		column, value := strings.TrimSpace(v.Column), strings.TrimSpace(v.Value)
		switch {
		case column != "" && value != "":
			return nil, apperr.Invalidf("mapping.placeholders.%s has both a column and a value: give one", k)
		case column == "" && value == "":
			return nil, apperr.Invalidf("mapping.placeholders.%s needs a column or a non-empty value", k)
		case column != "":
			i, err := col("placeholders."+k, column)
			if err != nil {
				return nil, err
			}
			sources = append(sources, source{key: k, field: DataField(k), col: i})
		default:
			sources = append(sources, source{key: k, field: DataField(k), col: -1, value: value})
		}
	}
	for _, k := range slots {
		if _, ok := m.Placeholders[k]; !ok {
			out.Unmapped = append(out.Unmapped, k)
		}
	}

	cell := func(r dataops.CSVRow, i int) string {
		if i < len(r.Cells) {
			return strings.TrimSpace(r.Cells[i])
		}
		return ""
	}
	seen := make(map[string]bool, len(f.Rows))
	out.rows = make([]models.CampaignRecipient, 0, len(f.Rows))
	phoneHeader := f.Header[phoneCol]
	for _, r := range f.Rows {
		var bad []string
		raw := cell(r, phoneCol)
		number, perr := phone.Normalize(raw)
		switch {
		case raw == "":
			bad = append(bad, phoneHeader+": missing")
		case perr != nil:
			bad = append(bad, fmt.Sprintf("%s: %q is not a phone number", phoneHeader, raw))
		}
		data := make(map[string]any, len(sources))
		for _, s := range sources {
			if s.col < 0 {
				data[s.field] = s.value
				continue
			}
			v := cell(r, s.col)
			if v == "" {
				bad = append(bad, fmt.Sprintf("%s: empty, and placeholder {{%s}} needs a value", f.Header[s.col], s.key))
				continue
			}
			data[s.field] = v
		}
		if len(bad) > 0 {
			out.Invalid++
			if len(out.Problems) < CSVMaxProblems {
				out.Problems = append(out.Problems, CSVProblem{Row: r.Row, Message: strings.Join(bad, "; ")})
			}
			continue
		}
		if seen[number] {
			out.Duplicates++
			continue
		}
		seen[number] = true
		rec := models.CampaignRecipient{PhoneNumber: number, Status: models.RecipientPending}
		if nameCol >= 0 {
			rec.Name = cell(r, nameCol)
		}
		rec.Data.V = data
		out.rows = append(out.rows, rec)
	}
	out.Recipients = len(out.rows)
	return out, nil
}

// ProblemsText is the refusal of a file with problem rows: the count and
// the rows listed as /api/import lists them ("row 3: ...").
func (c *CSVCheck) ProblemsText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d rows cannot be imported, so nothing was imported: ", c.Invalid, c.Rows)
	for i, p := range c.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "row %d: %s", p.Row, p.Message)
	}
	if more := c.Invalid - len(c.Problems); more > 0 {
		fmt.Fprintf(&b, "; ... and %d more", more)
	}
	return b.String()
}

// propose maps a file's columns by their headers: the phone number to the
// first column whose header speaks of a number (else the first column),
// the name to a column called name, and each placeholder to a column of
// its own key.
func propose(header, slots []string) CSVMapping {
	m := CSVMapping{Placeholders: map[string]CSVValue{}}
	lower := make([]string, len(header))
	for i, h := range header {
		lower[i] = strings.ToLower(h)
	}
	for i, h := range lower {
		if m.PhoneNumber == "" && containsAny(h, "phone", "mobile", "number", "msisdn", "whatsapp", "cell", "tel") {
			m.PhoneNumber = header[i]
		}
		if m.Name == "" && (h == "name" || h == "full name" || h == "full_name" || h == "customer name") {
			m.Name = header[i]
		}
	}
	if m.PhoneNumber == "" && len(header) > 0 {
		m.PhoneNumber = header[0]
	}
	for _, k := range slots {
		if i := slices.Index(lower, strings.ToLower(k)); i >= 0 && header[i] != m.PhoneNumber {
			m.Placeholders[k] = CSVValue{Column: header[i]}
		}
	}
	return m
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// CheckCSVFor checks a file for a campaign yet to be created: its template
// (when given) must be the organization's.
func (s *Service) CheckCSVFor(ctx context.Context, orgID uuid.UUID, templateID *uuid.UUID, data []byte, mapping *CSVMapping) (*CSVCheck, error) {
	var t *models.Template
	if templateID != nil {
		var err error
		if t, err = s.templates.Get(ctx, orgID, *templateID); err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return nil, apperr.Invalidf("template_id does not name a template of this organization")
			}
			return nil, err
		}
	}
	return CheckCSV(data, mapping, t)
}

// ImportCSV adds the recipients of a CSV file to a draft campaign, checked
// as CheckCSV checks them: the mapping must give every placeholder of the
// campaign's template a value, and a file with problem rows is refused
// whole, listing them (nothing is stored). The campaign's variable_mapping
// becomes the data fields the values are stored in (DataField), so the
// campaign can start as it is.
func (s *Service) ImportCSV(ctx context.Context, orgID, id uuid.UUID, data []byte, mapping CSVMapping) (*ImportResult, error) {
	c, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if c.Status != models.CampaignDraft {
		return nil, apperr.Conflictf("recipients can only be imported into a draft campaign; this one is %s", c.Status)
	}
	if c.Audience.V != nil {
		return nil, apperr.Conflictf("the campaign's recipients come from its audience when it starts: remove the audience to upload recipients")
	}
	if c.TemplateID == nil {
		return nil, apperr.Invalidf("the campaign's template was deleted: choose another one first")
	}
	t, err := s.templates.Get(ctx, orgID, *c.TemplateID)
	if err != nil {
		if apperr.Is(err, apperr.NotFound) {
			return nil, apperr.Invalidf("the campaign's template was deleted: choose another one first")
		}
		return nil, err
	}
	chk, err := CheckCSV(data, &mapping, t)
	if err != nil {
		return nil, err
	}
	if len(chk.Unmapped) > 0 {
		return nil, apperr.Invalidf("mapping.placeholders leaves placeholders of template %s without a value: %s (map each to a column or a fixed value)",
			t.Name, strings.Join(chk.Unmapped, ", "))
	}
	if chk.Invalid > 0 {
		return nil, apperr.Invalidf("%s", chk.ProblemsText())
	}
	if chk.Rows == 0 {
		return nil, apperr.Invalidf("the file has no data rows: it needs a row per recipient under the header")
	}
	vm := make(map[string]string, len(chk.Mapping.Placeholders))
	for k := range chk.Mapping.Placeholders {
		vm[k] = DataField(k)
	}
	for i := range chk.rows {
		chk.rows[i].CampaignID, chk.rows[i].OrganizationID = c.ID, orgID
	}
	res := &ImportResult{Duplicates: chk.Duplicates}
	if err := s.store(ctx, c, chk.rows, vm, res); err != nil {
		return nil, err
	}
	return res, nil
}
