package jobs

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task types of the document framework's index builds (internal/docframe,
// indexes.go).
const (
	TypeDocframeIndexes    = "docframe:indexes"
	TypeDocframeIndexSweep = "docframe:index_sweep"
)

// indexBuildTimeout bounds one build: CREATE INDEX CONCURRENTLY scans the
// shared documents table twice and waits for older transactions, so a
// large table takes minutes, not seconds.
const indexBuildTimeout = 30 * time.Minute

// DocframeIndexes brings a DocType's field indexes in line with its stored
// definition after a change, outside the change's transaction: builds them
// concurrently (an invalid leftover is dropped and built again) and drops
// Drop, the indexes the previous definition had, unless the current one
// wants them again. Idempotent: it reads the definition it works from, so a
// retried or duplicated task, or one overtaken by a later change, does the
// right thing.
type DocframeIndexes struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	Doctype        string    `json:"doctype"`
	Drop           []string  `json:"drop,omitempty"`
}

// TaskType implements Payload.
func (DocframeIndexes) TaskType() string { return TypeDocframeIndexes }

// Options implements optioner: maintenance work, retried with asynq's
// backoff (a build that failed leaves an invalid index, which the next try
// replaces).
func (DocframeIndexes) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueLow), asynq.MaxRetry(10), asynq.Timeout(indexBuildTimeout)}
}

// DocframeIndexSweep is one tick of the sweep that finds what a lost or
// crashed build left behind: wanted indexes missing or invalid (built),
// indexes no definition wants (dropped).
type DocframeIndexSweep sweep

// TaskType implements Payload.
func (DocframeIndexSweep) TaskType() string { return TypeDocframeIndexSweep }

// Options implements optioner: one task per tick.
func (p DocframeIndexSweep) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueLow), asynq.MaxRetry(1), asynq.Timeout(indexBuildTimeout),
		asynq.TaskID(fmt.Sprintf("docframe-index-sweep:%d", p.Tick.Unix())), asynq.Retention(time.Hour)}
}
