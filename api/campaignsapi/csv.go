package campaignsapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/campaigns"
	"wharf/internal/dataops"
	"wharf/internal/infra/apperr"
)

// maxCSVField bounds the form's text fields (mapping, template_id).
const maxCSVField = 64 << 10

// csvForm is a recipients file form as read.
type csvForm struct {
	file       []byte
	hasFile    bool
	mapping    string
	hasMapping bool
	templateID string
}

// isMultipart reports whether the request is a multipart form (the CSV
// variant of the recipients import) rather than JSON.
func isMultipart(c *gin.Context) bool {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// readCSVForm reads the form's parts as a stream, like /api/import's: the
// file up to campaigns.MaxCSVBytes and one byte (a longer one is refused
// without reading on), text fields up to maxCSVField, other parts skipped,
// the whole body bounded.
func readCSVForm(c *gin.Context) (*csvForm, error) {
	tooLarge := func() error {
		// The rest of the body is not read: the connection closes after
		// the answer.
		c.Header("Connection", "close")
		return apperr.Invalidf("the file is larger than %s", dataops.SizeText(campaigns.MaxCSVBytes))
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, campaigns.MaxCSVBytes+1<<20)
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return nil, apperr.Invalidf("the request must be multipart/form-data with the fields file and mapping")
	}
	f := &csvForm{}
	var maxBytes *http.MaxBytesError
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return f, nil
		}
		if errors.As(err, &maxBytes) {
			return nil, tooLarge()
		}
		if err != nil {
			return nil, apperr.Invalidf("the multipart form cannot be read: %v", err)
		}
		switch name := part.FormName(); name {
		case "file":
			f.hasFile = true
			f.file, err = io.ReadAll(io.LimitReader(part, campaigns.MaxCSVBytes+1))
			if err == nil && len(f.file) > campaigns.MaxCSVBytes {
				return nil, tooLarge()
			}
		case "mapping", "template_id":
			var b []byte
			b, err = io.ReadAll(io.LimitReader(part, maxCSVField+1))
			if len(b) > maxCSVField {
				return nil, apperr.Invalidf("%s is longer than 64 KB", name)
			}
			if name == "mapping" {
				f.mapping, f.hasMapping = string(b), true
			} else {
				f.templateID = strings.TrimSpace(string(b))
			}
		default:
			_, err = io.Copy(io.Discard, part)
		}
		if errors.As(err, &maxBytes) {
			return nil, tooLarge()
		}
		if err != nil {
			return nil, apperr.Invalidf("the multipart form cannot be read: %v", err)
		}
	}
}

// file is the form's file, required.
func (f *csvForm) needFile() error {
	if !f.hasFile {
		return apperr.Invalidf("file is required (multipart/form-data field 'file': a CSV file with a header row)")
	}
	return nil
}

// parseMapping reads the mapping field; nil when the form has none.
func (f *csvForm) parseMapping() (*campaigns.CSVMapping, error) {
	if !f.hasMapping || strings.TrimSpace(f.mapping) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(f.mapping))
	dec.DisallowUnknownFields()
	var m campaigns.CSVMapping
	if err := dec.Decode(&m); err != nil {
		return nil, apperr.Invalidf(`mapping must be a JSON object like {"phone_number": "Mobile", "name": "Name", `+
			`"placeholders": {"1": {"column": "First name"}, "2": {"value": "SPRING24"}}}: %v`, err)
	}
	return &m, nil
}

// importCSV is the multipart variant of the recipients import.
func (h *Handlers) importCSV(c *gin.Context, id uuid.UUID) {
	form, err := readCSVForm(c)
	if err == nil {
		err = form.needFile()
	}
	var mapping *campaigns.CSVMapping
	if err == nil {
		mapping, err = form.parseMapping()
	}
	if err == nil && mapping == nil {
		err = apperr.Invalidf("mapping is required (multipart/form-data field 'mapping': which column holds the phone number, " +
			"and a column or a fixed value for each placeholder of the template)")
	}
	if err != nil {
		web.Fail(c, err)
		return
	}
	res, err := h.campaigns.ImportCSV(c.Request.Context(), web.Principal(c).OrgID, id, form.file, *mapping)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, importResp{Imported: res.Imported, Duplicates: res.Duplicates, Invalid: 0, InvalidRows: []campaigns.InvalidRow{}})
}

// checkCSV is the dry run of a recipients file, before any campaign.
func (h *Handlers) checkCSV(c *gin.Context) {
	form, err := readCSVForm(c)
	if err == nil {
		err = form.needFile()
	}
	var mapping *campaigns.CSVMapping
	if err == nil {
		mapping, err = form.parseMapping()
	}
	var templateID *uuid.UUID
	if err == nil && form.templateID != "" {
		templateID, err = web.OptionalUUID("template_id", &form.templateID)
	}
	if err != nil {
		web.Fail(c, err)
		return
	}
	chk, err := h.campaigns.CheckCSVFor(c.Request.Context(), web.Principal(c).OrgID, templateID, form.file, mapping)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toCheckResp(chk))
}

// csvImportRequest is the multipart variant of the recipients import
// (documentation: the handler reads the parts as a stream).
type csvImportRequest struct {
	File *multipart.FileHeader `formData:"file" description:"The CSV file with a header row: UTF-8 with or without BOM, separated by ; or , (detected from the header row), at most 32 MB, 100,000 data rows, 200 columns and 64 KB a line; read as /api/import reads a file."`
	// Mapping is text: a JSON object.
	Mapping string `formData:"mapping" description:"JSON object: {\"phone_number\": header, \"name\": header (optional), \"placeholders\": {key: {\"column\": header} or {\"value\": text}}}, a value for every placeholder of the campaign's template."`
}

// checkRequest is the form of the dry run.
type checkRequest struct {
	File    *multipart.FileHeader `formData:"file" description:"The CSV file, as for the import."`
	Mapping string                `formData:"mapping" description:"The mapping, as for the import (optional: without it the answer proposes one from the headers)."`
	// TemplateID names the template whose placeholders the mapping fills.
	TemplateID string `formData:"template_id" description:"The template the campaign will send (optional): its placeholders are checked and the unmapped ones listed."`
}

type previewRow struct {
	Row   int      `json:"row"`
	Cells []string `json:"cells"`
}

// checkResp is what the file would import under the mapping.
type checkResp struct {
	Columns     []string               `json:"columns"`
	Rows        int                    `json:"rows"`    // data rows
	Preview     []previewRow           `json:"preview"` // the first 5
	Mapping     campaigns.CSVMapping   `json:"mapping"` // the one checked: the caller's or the proposed one
	Unmapped    []string               `json:"unmapped"`
	Recipients  int                    `json:"recipients"`   // rows that would be imported
	Duplicates  int                    `json:"duplicates"`   // rows whose number an earlier row has
	Invalid     int                    `json:"invalid"`      // rows that refuse the import
	InvalidRows []campaigns.CSVProblem `json:"invalid_rows"` // the first 100
}

func toCheckResp(chk *campaigns.CSVCheck) checkResp {
	out := checkResp{Columns: chk.Columns, Rows: chk.Rows, Preview: make([]previewRow, len(chk.Preview)), Mapping: chk.Mapping,
		Unmapped: chk.Unmapped, Recipients: chk.Recipients, Duplicates: chk.Duplicates, Invalid: chk.Invalid, InvalidRows: chk.Problems}
	for i, r := range chk.Preview {
		out.Preview[i] = previewRow{Row: r.Row, Cells: r.Cells}
	}
	if out.Unmapped == nil {
		out.Unmapped = []string{}
	}
	if out.InvalidRows == nil {
		out.InvalidRows = []campaigns.CSVProblem{}
	}
	return out
}
