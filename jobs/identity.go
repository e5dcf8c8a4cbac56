package jobs

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task types of the identity domain.
const (
	TypeAPIKeyTouch        = "apikey:touch"
	TypePurgeRefreshTokens = "maintenance:purge_refresh_tokens"
)

// APIKeyTouch records that an API key was used at UsedAt. The api enqueues at
// most one per key per minute, so last_used_at costs no write per request.
type APIKeyTouch struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	APIKeyID       uuid.UUID `json:"api_key_id"`
	UsedAt         time.Time `json:"used_at"`
}

// TaskType implements Payload.
func (APIKeyTouch) TaskType() string { return TypeAPIKeyTouch }

// Options: one task per key and minute across all api replicas.
func (p APIKeyTouch) Options() []asynq.Option {
	return []asynq.Option{
		asynq.Queue(QueueLow),
		asynq.MaxRetry(3),
		asynq.Timeout(10 * time.Second),
		asynq.TaskID(fmt.Sprintf("apikey-touch:%s:%d", p.APIKeyID, p.UsedAt.Unix()/60)),
		asynq.Retention(2 * time.Minute), // keeps the id taken for the rest of the minute
	}
}

// PurgeRefreshTokens deletes refresh tokens that can no longer be used.
// Tick is the scheduler tick that fired it; it makes the task id unique per
// tick, so two schedulers firing the same tick enqueue it once.
type PurgeRefreshTokens struct {
	Tick time.Time `json:"tick"`
}

// TaskType implements Payload.
func (PurgeRefreshTokens) TaskType() string { return TypePurgeRefreshTokens }

// Options implements optioner.
func (p PurgeRefreshTokens) Options() []asynq.Option {
	return []asynq.Option{
		asynq.Queue(QueueLow),
		asynq.MaxRetry(3),
		asynq.Timeout(5 * time.Minute),
		asynq.TaskID(fmt.Sprintf("purge-refresh-tokens:%d", p.Tick.Unix())),
		asynq.Retention(24 * time.Hour),
	}
}
