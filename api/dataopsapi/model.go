package dataopsapi

import (
	"mime/multipart"
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/dataops"
)

// exportRequest is the body of POST /api/export.
type exportRequest struct {
	Table   string   `json:"table"`
	Columns []string `json:"columns"`
	Filters struct {
		Search string `json:"search"`
		// Tags is a comma-separated list (contacts having any of them).
		Tags string `json:"tags"`
	} `json:"filters"`
	Format string `json:"format"`
}

type columnResp struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

type configResp struct {
	Table          string       `json:"table"`
	Columns        []columnResp `json:"columns"`
	DefaultColumns []string     `json:"default_columns"`
}

// importRequest is the multipart form of POST /api/import (documentation:
// the handler reads the parts as a stream, so that no more than the limit
// is ever read).
type importRequest struct {
	Table string                `formData:"table" description:"contacts or tags"`
	File  *multipart.FileHeader `formData:"file" description:"The CSV file: UTF-8 with or without BOM, separated by ; or , (detected from the header row), at most 10 MB and 10,000 data rows."`
	// ColumnMapping is text: a JSON object.
	ColumnMapping     string `formData:"column_mapping" description:"JSON object header -> column; unmapped headers match a column by lower-cased key or label, and headers matching none are ignored."`
	UpdateOnDuplicate string `formData:"update_on_duplicate" description:"'true' updates the record found by the unique column with the row's non-empty cells; otherwise such rows are skipped."`
}

// importResp is an import's result.
type importResp struct {
	Created  int      `json:"created"`
	Updated  int      `json:"updated"`
	Skipped  int      `json:"skipped" description:"Rows not written: duplicates of an earlier row of the file, and rows of existing records when not updating."`
	Errors   int      `json:"errors" description:"Rows refused; each has a message."`
	Messages []string `json:"messages" description:"Per-row messages (row N: column: reason), row 1 being the header; at most 1,000, then '... and N more'."`
}

func toImportResp(r *dataops.ImportResult) importResp {
	return importResp{Created: r.Created, Updated: r.Updated, Skipped: r.Skipped, Errors: r.Errors, Messages: r.Messages}
}

// importQueuedResp answers an import that outlasted the wait.
type importQueuedResp struct {
	JobID       string `json:"job_id" format:"uuid"`
	Status      string `json:"status" enum:"queued,running"`
	ProgressURL string `json:"progress_url" description:"GET it for the progress and, once done, the result."`
}

// importJobResp is an import's progress and, once done, its result.
type importJobResp struct {
	JobID         string      `json:"job_id" format:"uuid"`
	Table         string      `json:"table"`
	Status        string      `json:"status" enum:"queued,running,done,failed"`
	TotalRows     int         `json:"total_rows"`
	ProcessedRows int         `json:"processed_rows" description:"Rows checked so far."`
	Result        *importResp `json:"result" description:"The result, once done; null before."`
	Error         string      `json:"error,omitempty" description:"Why the import failed, when it did."`
	CreatedAt     time.Time   `json:"created_at"`
	FinishedAt    *time.Time  `json:"finished_at"`
}

func toImportJobResp(j *dataops.ImportJob) importJobResp {
	out := importJobResp{JobID: j.ID.String(), Table: j.Table, Status: j.Status, TotalRows: j.TotalRows, ProcessedRows: j.ProcessedRows,
		Error: j.Error, CreatedAt: web.UTC(j.CreatedAt)}
	if j.FinishedAt != nil {
		t := web.UTC(*j.FinishedAt)
		out.FinishedAt = &t
	}
	if j.Result != nil {
		r := toImportResp(j.Result)
		out.Result = &r
	}
	return out
}

// importConfigResp is what a table takes in an import.
type importConfigResp struct {
	Table           string   `json:"table"`
	RequiredColumns []string `json:"required_columns"`
	OptionalColumns []string `json:"optional_columns"`
	UniqueColumn    string   `json:"unique_column"`
}

type importJobsQuery struct {
	web.PageQuery
	Table string `query:"table" description:"Only imports of this table (contacts or tags)."`
}

// importJobSummaryResp is one import of the list: its state and counts,
// without the result's messages (GET /api/import/jobs/{id} has them).
type importJobSummaryResp struct {
	JobID         string     `json:"job_id" format:"uuid"`
	Table         string     `json:"table"`
	Status        string     `json:"status" enum:"queued,running,done,failed"`
	Mine          bool       `json:"mine" description:"The caller uploaded it (and sees the file's values in its messages)."`
	TotalRows     int        `json:"total_rows"`
	ProcessedRows int        `json:"processed_rows"`
	Created       *int       `json:"created" description:"Once done; null before."`
	Updated       *int       `json:"updated" description:"Once done; null before."`
	Skipped       *int       `json:"skipped" description:"Once done; null before."`
	Errors        *int       `json:"errors" description:"Rows refused, once done; null before."`
	Error         string     `json:"error,omitempty" description:"Why the import failed, when it did."`
	CreatedAt     time.Time  `json:"created_at"`
	FinishedAt    *time.Time `json:"finished_at"`
}

func toImportJobSummaryResp(j dataops.ImportJobSummary, user uuid.UUID) importJobSummaryResp {
	return importJobSummaryResp{JobID: j.ID.String(), Table: j.Table, Status: j.Status, Mine: j.UserID != nil && *j.UserID == user,
		TotalRows: j.TotalRows, ProcessedRows: j.ProcessedRows, Created: j.Created, Updated: j.Updated, Skipped: j.Skipped, Errors: j.Errors,
		Error: j.Error, CreatedAt: web.UTC(j.CreatedAt), FinishedAt: web.UTCPtr(j.FinishedAt)}
}
