package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// TypeTemplateSync reads every template of an account from the provider.
const TypeTemplateSync = "template:sync"

// TemplateSync synchronises an account's templates; its result is the JSON
// of the counts (synced, new, updated), kept for the endpoint that waits.
type TemplateSync struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	AccountID      uuid.UUID `json:"account_id"`
}

// TaskType implements Payload.
func (TemplateSync) TaskType() string { return TypeTemplateSync }

// Options implements optioner.
func (TemplateSync) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(2), asynq.Timeout(5 * time.Minute),
		asynq.Retention(10 * time.Minute)}
}
