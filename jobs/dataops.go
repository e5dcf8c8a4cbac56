package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeImport runs a CSV import the api checked and stored in import_jobs.
const TypeImport = "dataops:import"

// Import names the import_jobs row to run. Its task id is the row's id, so
// a duplicate enqueue is refused; the result (created, updated, skipped,
// errors, messages) is kept in the row and, with the progress, written to
// the task's result for the asynq UI.
type Import struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	ImportID       uuid.UUID `json:"import_id"`
}

// TaskType implements Payload.
func (Import) TaskType() string { return TypeImport }

// Options implements optioner.
func (p Import) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(3), asynq.Timeout(5 * time.Minute),
		asynq.Retention(10 * time.Minute), asynq.TaskID("import:" + p.ImportID.String())}
}

// TypeImportPurge deletes imports past their retention (their file, their
// progress and their result).
const TypeImportPurge = "maintenance:purge_imports"

// ImportPurge is one tick of that purge.
type ImportPurge sweep

// TaskType implements Payload.
func (ImportPurge) TaskType() string { return TypeImportPurge }

// Options implements optioner.
func (p ImportPurge) Options() []asynq.Option { return sweepOptions("import-purge", p.Tick) }
