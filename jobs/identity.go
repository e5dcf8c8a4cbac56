package jobs

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task kinds of the identity domain.
const (
	KindAPIKeyTouch        = "apikey:touch"
	KindPurgeRefreshTokens = "maintenance:purge_refresh_tokens"
)

// APIKeyTouch records that an API key was used at UsedAt. The api enqueues at
// most one per key per minute, so last_used_at costs no write per request.
type APIKeyTouch struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	APIKeyID       uuid.UUID `json:"api_key_id"`
	UsedAt         time.Time `json:"used_at"`
}

// Kind implements Payload.
func (APIKeyTouch) Kind() string { return KindAPIKeyTouch }

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

// Kind implements Payload.
func (PurgeRefreshTokens) Kind() string { return KindPurgeRefreshTokens }

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
