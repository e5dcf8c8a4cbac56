package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task types of the integration's notifications (internal/integration/notify).
const (
	TypeNotifySend = "wharfnotify:send"
	TypeNotifyRun  = "wharfnotify:run"
	TypeNotifyTick = "wharfnotify:tick"
)

// NotifySend sends one row of the notifications' send ledger. Its task id
// is the row's id: the row's compare-and-set, not the queue, is what keeps
// a retried or duplicated task from sending twice.
type NotifySend struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	SendID         uuid.UUID `json:"send_id"`
}

// TaskType implements Payload.
func (NotifySend) TaskType() string { return TypeNotifySend }

// Options implements optioner.
func (p NotifySend) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(5), asynq.Timeout(time.Minute),
		asynq.TaskID("wharfnotify:send:" + p.SendID.String())}
}

// NotifyRun runs one Scheduler Event notification for one tick: the
// condition over the reference DocType's documents, one ledger row per send.
type NotifyRun struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	Notification   string    `json:"notification"`
	Tick           time.Time `json:"tick"`
}

// TaskType implements Payload.
func (NotifyRun) TaskType() string { return TypeNotifyRun }

// Options implements optioner: one task per notification and tick.
func (p NotifyRun) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(3), asynq.Timeout(5 * time.Minute),
		asynq.TaskID("wharfnotify:run:" + p.OrganizationID.String() + ":" + p.Tick.UTC().Format(time.RFC3339) + ":" + p.Notification)}
}

// NotifyTick is the scheduler's minute: it finds the Scheduler Event
// notifications due at Tick and sweeps the ledger.
type NotifyTick struct {
	Tick time.Time `json:"tick"`
}

// TaskType implements Payload.
func (NotifyTick) TaskType() string { return TypeNotifyTick }

// Options implements optioner.
func (p NotifyTick) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(3), asynq.Timeout(time.Minute),
		asynq.TaskID("wharfnotify:tick:" + p.Tick.UTC().Format(time.RFC3339))}
}
