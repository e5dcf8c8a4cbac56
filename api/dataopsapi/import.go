package dataopsapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/dataops"
	"wharf/internal/infra/apperr"
	"wharf/models"
)

// maxFormField bounds the form's text fields (table, column_mapping...).
const maxFormField = 64 << 10

// importForm is the multipart form as read.
type importForm struct {
	table, mapping, update string
	file                   []byte
	hasFile, fileTooLarge  bool
}

// readImportForm reads the form's parts as a stream: the file part up to
// the limit and one byte (a longer one is refused without reading on), the
// text fields up to maxFormField, the rest skipped; the whole body is
// bounded too, so nothing is buffered beyond what the limits allow.
func readImportForm(c *gin.Context) (*importForm, error) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, dataops.MaxImportBytes+1<<20)
	mr, err := c.Request.MultipartReader()
	if err != nil {
		return nil, apperr.Invalidf("the request must be multipart/form-data with the fields table and file")
	}
	f := &importForm{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return f, nil
		}
		var maxBytes *http.MaxBytesError
		if errors.As(err, &maxBytes) {
			f.fileTooLarge = true
			return f, nil
		}
		if err != nil {
			return nil, apperr.Invalidf("the multipart form cannot be read: %v", err)
		}
		switch part.FormName() {
		case "file":
			f.hasFile = true
			f.file, err = io.ReadAll(io.LimitReader(part, dataops.MaxImportBytes+1))
			if errors.As(err, &maxBytes) || len(f.file) > dataops.MaxImportBytes {
				f.fileTooLarge, f.file = true, nil
				return f, nil
			}
		case "table", "column_mapping", "update_on_duplicate":
			var b []byte
			b, err = io.ReadAll(io.LimitReader(part, maxFormField+1))
			if len(b) > maxFormField {
				return nil, apperr.Invalidf("%s is longer than 64 KB", part.FormName())
			}
			switch part.FormName() {
			case "table":
				f.table = strings.TrimSpace(string(b))
			case "column_mapping":
				f.mapping = string(b)
			default:
				f.update = strings.TrimSpace(string(b))
			}
		default:
			_, err = io.Copy(io.Discard, part)
		}
		if errors.As(err, &maxBytes) {
			f.fileTooLarge = true
			return f, nil
		}
		if err != nil {
			return nil, apperr.Invalidf("the multipart form cannot be read: %v", err)
		}
	}
}

func (h *Handlers) importFile(c *gin.Context) {
	form, err := readImportForm(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if form.fileTooLarge {
		// The rest of the body is not read: the connection closes after
		// the answer.
		c.Header("Connection", "close")
		if form.table != "" && !mayImport(c, form.table) {
			return
		}
		web.Fail(c, apperr.Invalidf("the file is larger than 10 MB"))
		return
	}
	if !mayImport(c, form.table) {
		return
	}
	if !form.hasFile {
		web.Fail(c, apperr.Invalidf("file is required (multipart/form-data field 'file')"))
		return
	}
	var mapping map[string]string
	if m := strings.TrimSpace(form.mapping); m != "" {
		if err := json.Unmarshal([]byte(m), &mapping); err != nil || mapping == nil {
			web.Fail(c, apperr.Invalidf(`column_mapping must be a JSON object of header -> column, like {"Mobile": "phone_number"}`))
			return
		}
	}
	// The wait for the worker's result may outlast HTTP_WRITE_TIMEOUT; the
	// answer still has to go out after it.
	_ = web.WriteDeadlineIn(c, h.cfg.ImportWait+30*time.Second)
	p := web.Principal(c)
	userID := &p.UserID
	if p.UserID == uuid.Nil {
		userID = nil
	}
	job, err := h.ops.Import(c.Request.Context(), p.OrgID, userID, dataops.ImportRequest{Table: form.table, File: form.file,
		ColumnMapping: mapping, UpdateOnDuplicate: form.update == "true"}, h.cfg.ImportWait)
	switch {
	case err != nil:
		web.Fail(c, err)
	case job.Status == models.ImportDone:
		web.OK(c, toImportResp(job.Result))
	default:
		web.Accepted(c, importQueuedResp{JobID: job.ID.String(), Status: job.Status, ProgressURL: "/api/import/jobs/" + job.ID.String()})
	}
}

func (h *Handlers) importJob(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	p := web.Principal(c)
	job, err := h.ops.ImportJobFor(c.Request.Context(), dataops.ImportViewer{OrgID: p.OrgID, UserID: p.UserID,
		MayImport: func(table string) bool { return p.Can(table + ":import") }}, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toImportJobResp(job))
}

func (h *Handlers) importJobs(c *gin.Context) {
	pg, ok := web.Paging(c, 20, 100)
	if !ok {
		return
	}
	p := web.Principal(c)
	rows, total, err := h.ops.ImportJobs(c.Request.Context(), dataops.ImportViewer{OrgID: p.OrgID, UserID: p.UserID,
		MayImport: func(table string) bool { return p.Can(table + ":import") }}, strings.TrimSpace(c.Query("table")), pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]importJobSummaryResp, len(rows))
	for i, j := range rows {
		items[i] = toImportJobSummaryResp(j, p.UserID)
	}
	web.OK(c, web.NewPage(items, total, pg))
}

func (h *Handlers) importConfig(c *gin.Context) {
	table := c.Param("table")
	if !mayImport(c, table) {
		return
	}
	cfg, err := dataops.ImportConfigOf(table)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, importConfigResp{Table: cfg.Table, RequiredColumns: cfg.RequiredColumns, OptionalColumns: cfg.OptionalColumns,
		UniqueColumn: cfg.UniqueColumn})
}
