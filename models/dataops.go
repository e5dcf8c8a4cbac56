package models

import (
	"time"

	"github.com/google/uuid"
)

// Import job states.
const (
	ImportQueued  = "queued"
	ImportRunning = "running"
	ImportDone    = "done"
	ImportFailed  = "failed"
)

// ImportJob is a CSV import handed from the api to the worker: the file
// (cleared once finished), the options, the progress and the result.
type ImportJob struct {
	ID                uuid.UUID  `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID    uuid.UUID  `gorm:"type:uuid"`
	UserID            *uuid.UUID `gorm:"type:uuid"`
	Table             string     `gorm:"column:table_name"`
	File              []byte
	ColumnMapping     JSON[map[string]string] `gorm:"type:jsonb"`
	UpdateOnDuplicate bool
	Status            string
	TotalRows         int
	ProcessedRows     int
	Result            []byte `gorm:"type:jsonb"`
	Error             string
	Attempts          int
	CreatedAt         time.Time
	StartedAt         *time.Time
	FinishedAt        *time.Time
}
