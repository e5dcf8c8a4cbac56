package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeWharfTemplateSubmit submits a Platform Template document (the
// framework integration) to the provider through the core templates domain.
const TypeWharfTemplateSubmit = "wharf:template_submit"

// WharfTemplateSubmit names the document. The handler is idempotent: a
// document that has its template_id is done, and a template the core
// already has is reflected instead of submitted again.
type WharfTemplateSubmit struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	Name           string    `json:"name"`
}

// TaskType implements Payload.
func (WharfTemplateSubmit) TaskType() string { return TypeWharfTemplateSubmit }

// Options implements optioner.
func (WharfTemplateSubmit) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(5), asynq.Timeout(time.Minute)}
}

// TypeWharfSweep re-enqueues the submission of Platform Templates whose
// task was lost (a crash between the document's commit and the enqueue).
const TypeWharfSweep = "wharf:sweep"

// WharfSweep is one tick of that sweep.
type WharfSweep sweep

// TaskType implements Payload.
func (WharfSweep) TaskType() string { return TypeWharfSweep }

// Options implements optioner.
func (p WharfSweep) Options() []asynq.Option { return sweepOptions("wharf-sweep", p.Tick) }
