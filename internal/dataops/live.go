package dataops

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/infra/live"
	"wharf/models"
)

// LiveImport is the data of an import.progress event.
type LiveImport struct {
	JobID         uuid.UUID `json:"job_id"`
	Table         string    `json:"table" enum:"contacts,tags"`
	Status        string    `json:"status" enum:"queued,running,done,failed"`
	TotalRows     int       `json:"total_rows"`
	ProcessedRows int       `json:"processed_rows"`
}

// announce publishes an import's progress to the holders of its table's
// import permission (GET /api/import/jobs); the rows' values never travel.
func (s *Service) announce(ctx context.Context, orgID uuid.UUID, job *models.ImportJob, status string, done int) {
	s.live.Publish(ctx, orgID, live.New(live.ImportProgress, LiveImport{JobID: job.ID, Table: job.Table, Status: status,
		TotalRows: job.TotalRows, ProcessedRows: done}, live.Audience{AnyPerm: []string{job.Table + ":import"}}))
}
