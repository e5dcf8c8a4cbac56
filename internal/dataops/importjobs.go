package dataops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/jobs"
	"wharf/models"
)

// ImportRetention is how long an import's row (its file, progress and
// result) is kept after its creation; the scheduler's hourly purge
// (PurgeImports) deletes older ones.
const ImportRetention = 7 * 24 * time.Hour

// ImportRequest is an import as the api received it.
type ImportRequest struct {
	Table             string
	File              []byte
	ColumnMapping     map[string]string
	UpdateOnDuplicate bool
}

// ImportResult is what an import did. Errors counts the rows refused and
// Skipped the rows not written (duplicates of an earlier row of the file,
// and rows of existing records when not updating); Messages describe the
// refused rows and the file's duplicates, up to 1,000, with the values of
// the cells at fault. RedactedMessages are the same messages without any
// value of the file, for users other than the uploader (stored with the
// result; results stored before it have none, see Redacted).
type ImportResult struct {
	Created          int      `json:"created"`
	Updated          int      `json:"updated"`
	Skipped          int      `json:"skipped"`
	Errors           int      `json:"errors"`
	Messages         []string `json:"messages"`
	RedactedMessages []string `json:"redacted_messages,omitempty"`
}

// Redacted answers the result as users other than the uploader see it:
// the messages name rows, columns and problems but no value of the file. A
// result stored before redacted messages were kept shows only the rows.
func (r ImportResult) Redacted() ImportResult {
	out := r
	out.RedactedMessages = nil
	out.Messages = r.RedactedMessages
	if out.Messages == nil {
		out.Messages = make([]string, len(r.Messages))
		for i, m := range r.Messages {
			if row, _, ok := strings.Cut(m, ": "); ok && strings.HasPrefix(row, "row ") {
				m = row + ": the details are shown to the uploader only"
			}
			out.Messages[i] = m
		}
	}
	return out
}

// ImportJob is an import's state, for the endpoint that waits and the
// progress endpoint.
type ImportJob struct {
	ID            uuid.UUID
	UserID        *uuid.UUID // the uploader; nil when the user was deleted
	Table         string
	Status        string // queued, running, done, failed
	TotalRows     int
	ProcessedRows int
	Result        *ImportResult // when done
	Error         string        // when failed
	CreatedAt     time.Time
	FinishedAt    *time.Time
}

// CheckImport checks an import before anything is stored: the table, the
// file (size, encoding, CSV, at most 10,000 data rows) and its headers
// (column_mapping, required columns). It answers the number of data rows.
func CheckImport(req ImportRequest) (int, error) {
	t, err := tableOf(req.Table)
	if err != nil {
		return 0, err
	}
	f, err := parseCSV(req.File)
	if err != nil {
		return 0, err
	}
	if _, err := t.planImport(f.header, req.ColumnMapping); err != nil {
		return 0, err
	}
	return len(f.records), nil
}

// Import checks the request, stores it for the worker, enqueues the
// dataops:import job and waits up to wait for it. The job answered is done
// (with its result) when the worker finished in time, else queued or
// running: the worker goes on, and ImportJobOf shows its progress.
func (s *Service) Import(ctx context.Context, orgID uuid.UUID, userID *uuid.UUID, req ImportRequest, wait time.Duration) (*ImportJob, error) {
	rows, err := CheckImport(req)
	if err != nil {
		return nil, err
	}
	if req.ColumnMapping == nil {
		req.ColumnMapping = map[string]string{}
	}
	db := s.db.WithContext(ctx)
	job := models.ImportJob{ID: uuid.New(), OrganizationID: orgID, UserID: userID, Table: req.Table, File: req.File,
		ColumnMapping: models.JSON[map[string]string]{V: req.ColumnMapping}, UpdateOnDuplicate: req.UpdateOnDuplicate,
		Status: models.ImportQueued, TotalRows: rows}
	if err := db.Create(&job).Error; err != nil {
		return nil, err
	}
	_, _, _, err = s.enq.EnqueueAndWait(ctx, jobs.Import{OrganizationID: orgID, ImportID: job.ID}, wait)
	switch {
	case errors.Is(err, jobs.ErrTaskFailed):
		// The worker marked the row failed; the answer says why.
	case err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded):
		// Not enqueued: nothing will run it, so nothing is kept.
		if derr := s.db.Delete(&models.ImportJob{}, "id = ?", job.ID).Error; derr != nil {
			s.log.Warn("cannot delete an import job that was not enqueued", "id", job.ID, "error", derr)
		}
		return nil, fmt.Errorf("enqueue import: %w", err)
	}
	out, err := s.ImportJobOf(context.WithoutCancel(ctx), orgID, job.ID)
	if err == nil && out.Status == models.ImportFailed {
		return nil, fmt.Errorf("import %s failed: %s", job.ID, out.Error)
	}
	return out, err
}

// ImportViewer is who asks for an import's progress: a user of the
// organization, and whether it holds a table's import permission.
type ImportViewer struct {
	OrgID     uuid.UUID
	UserID    uuid.UUID
	MayImport func(table string) bool
}

// ImportJobFor answers an import of the viewer's organization (404 for
// another's) as the viewer may see it: its uploader sees it whole; another
// user needs the table's import permission (403) and sees the result's
// messages without the file's values (ImportResult.Redacted), since the
// file may hold numbers and names that user would not see otherwise.
func (s *Service) ImportJobFor(ctx context.Context, v ImportViewer, id uuid.UUID) (*ImportJob, error) {
	job, err := s.ImportJobOf(ctx, v.OrgID, id)
	if err != nil {
		return nil, err
	}
	if job.UserID != nil && *job.UserID == v.UserID {
		return job, nil
	}
	if !v.MayImport(job.Table) {
		return nil, apperr.Forbiddenf("importing %s needs the %s:import permission", job.Table, job.Table)
	}
	if job.Result != nil {
		r := job.Result.Redacted()
		job.Result = &r
	}
	return job, nil
}

// ImportJobOf answers an import of the organization (404 for another's),
// whole: for its uploader, and the worker.
func (s *Service) ImportJobOf(ctx context.Context, orgID, id uuid.UUID) (*ImportJob, error) {
	row, err := tenant.Get[models.ImportJob](ctx, s.db.Omit("file"), orgID, id, "import job not found")
	if err != nil {
		return nil, err
	}
	out := &ImportJob{ID: row.ID, UserID: row.UserID, Table: row.Table, Status: row.Status, TotalRows: row.TotalRows,
		ProcessedRows: row.ProcessedRows, Error: row.Error, CreatedAt: row.CreatedAt, FinishedAt: row.FinishedAt}
	if row.Status == models.ImportDone && len(row.Result) > 0 {
		out.Result = &ImportResult{}
		if err := json.Unmarshal(row.Result, out.Result); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PurgeImports deletes the imports created more than ImportRetention ago
// (maintenance:purge_imports, hourly) and reports how many. An import
// still running then (a week-old one is long dead) goes too: its worker
// finds no row and stops.
func (s *Service) PurgeImports(ctx context.Context) (int64, error) {
	res := s.db.WithContext(ctx).Where("created_at < ?", time.Now().Add(-ImportRetention)).Delete(&models.ImportJob{})
	return res.RowsAffected, res.Error
}

// ImportJobSummary is one import of a list: its state and, once done, its
// counts. It carries no message of the result, so no value of the file:
// each job's messages are read one at a time (ImportJobFor), where the
// uploader alone sees the values.
type ImportJobSummary struct {
	ID            uuid.UUID
	UserID        *uuid.UUID
	Table         string `gorm:"column:table_name"`
	Status        string
	TotalRows     int
	ProcessedRows int
	Error         string
	CreatedAt     time.Time
	FinishedAt    *time.Time
	// The result's counts, nil before the import is done.
	Created, Updated, Skipped, Errors *int
}

// ImportJobs lists the organization's recent imports (ImportRetention) the
// viewer may see by ImportJobFor's rules: its own, and every import of a
// table it may import; newest first. table, when given, keeps that
// table's. A viewer who may import no table (or not the table asked for)
// is refused: the list is the import page's, and its own imports stay
// readable one at a time.
func (s *Service) ImportJobs(ctx context.Context, v ImportViewer, table string, pg paging.Params) ([]ImportJobSummary, int64, error) {
	var allowed []string
	for _, t := range tables {
		if v.MayImport(t.name) {
			allowed = append(allowed, t.name)
		}
	}
	if table != "" {
		if _, err := tableOf(table); err != nil {
			return nil, 0, err
		}
	}
	switch {
	case table != "" && !slices.Contains(allowed, table):
		return nil, 0, apperr.Forbiddenf("importing %s needs the %s:import permission", table, table)
	case len(allowed) == 0:
		return nil, 0, apperr.Forbiddenf("the import list needs contacts:import or tags:import")
	}
	q := `SELECT id, user_id, table_name, status, total_rows, processed_rows, error, created_at, finished_at,
		(result->>'created')::int AS created, (result->>'updated')::int AS updated,
		(result->>'skipped')::int AS skipped, (result->>'errors')::int AS errors
		FROM import_jobs WHERE organization_id = @org AND (user_id = @user OR table_name IN @tables)`
	args := map[string]any{"org": v.OrgID, "user": v.UserID, "tables": allowed}
	if table != "" {
		q += ` AND table_name = @table`
		args["table"] = table
	}
	return paging.Raw[ImportJobSummary](s.db.WithContext(ctx), q, args, pg, "created_at DESC, id DESC")
}
