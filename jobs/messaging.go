package jobs

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task kinds of messaging, inbound webhooks and outbound webhooks.
const (
	KindInboundProcess  = "inbound:process"
	KindInboundStatuses = "inbound:statuses"
	KindInboundSweep    = "inbound:sweep"
	KindMessageSend     = "message:send"
	KindMessageSweep    = "message:sweep_unconfirmed"
	KindAccountRefresh  = "account:refresh"
	KindWebhookDispatch = "webhook:dispatch"
	KindWebhookDeliver  = "webhook:deliver"
	KindEventsSweep     = "events:sweep"
)

// InboundProcess applies the stored inbound events of one contact of one
// account, in arrival order. Duplicates are harmless: the handler takes
// whatever is pending.
type InboundProcess struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	AccountID      uuid.UUID `json:"account_id"`
	ContactKey     string    `json:"contact_key"`
}

// Kind implements Payload.
func (InboundProcess) Kind() string { return KindInboundProcess }

// Options: on the critical queue, so campaigns never delay inbound traffic.
func (InboundProcess) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueCritical), asynq.MaxRetry(10), asynq.Timeout(2 * time.Minute)}
}

// InboundStatuses applies pending status events of an account in bulk.
// Tasks are cheap when there is nothing left: each drains what is pending,
// so a burst of webhooks is applied by a few batched transactions.
type InboundStatuses struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	AccountID      uuid.UUID `json:"account_id"`
}

// Kind implements Payload.
func (InboundStatuses) Kind() string { return KindInboundStatuses }

// Options implements optioner.
func (InboundStatuses) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueCritical), asynq.MaxRetry(10), asynq.Timeout(2 * time.Minute)}
}

// Sweep payloads carry the tick that fired them (one task per tick).
type sweep struct {
	Tick time.Time `json:"tick"`
}

// InboundSweep re-enqueues inbound events whose task was lost.
type InboundSweep sweep

// Kind implements Payload.
func (InboundSweep) Kind() string { return KindInboundSweep }

// Options implements optioner.
func (p InboundSweep) Options() []asynq.Option { return sweepOptions("inbound-sweep", p.Tick) }

// EventsSweep re-enqueues outbound events whose dispatch task was lost.
type EventsSweep sweep

// Kind implements Payload.
func (EventsSweep) Kind() string { return KindEventsSweep }

// Options implements optioner.
func (p EventsSweep) Options() []asynq.Option { return sweepOptions("events-sweep", p.Tick) }

// MessageSweep resolves outbound sends whose outcome stayed unknown.
type MessageSweep sweep

// Kind implements Payload.
func (MessageSweep) Kind() string { return KindMessageSweep }

// Options implements optioner.
func (p MessageSweep) Options() []asynq.Option { return sweepOptions("message-sweep", p.Tick) }

func sweepOptions(name string, tick time.Time) []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueLow), asynq.MaxRetry(1), asynq.Timeout(5 * time.Minute),
		asynq.TaskID(fmt.Sprintf("%s:%d", name, tick.Unix())), asynq.Retention(10 * time.Minute)}
}

// MessageSend sends one queued outbound message (template sends).
type MessageSend struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	MessageID      uuid.UUID `json:"message_id"`
}

// Kind implements Payload.
func (MessageSend) Kind() string { return KindMessageSend }

// Options: one task per message.
func (p MessageSend) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueCritical), asynq.MaxRetry(8), asynq.Timeout(time.Minute),
		asynq.TaskID("message-send:" + p.MessageID.String()), asynq.Retention(time.Hour)}
}

// AccountRefresh reads an account's phone number details from the provider.
type AccountRefresh struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	AccountID      uuid.UUID `json:"account_id"`
}

// Kind implements Payload.
func (AccountRefresh) Kind() string { return KindAccountRefresh }

// Options implements optioner.
func (AccountRefresh) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(5), asynq.Timeout(time.Minute)}
}

// WebhookDispatch delivers one event to every subscribed webhook.
type WebhookDispatch struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	EventID        uuid.UUID `json:"event_id"`
}

// Kind implements Payload.
func (WebhookDispatch) Kind() string { return KindWebhookDispatch }

// Options: one task per event.
func (p WebhookDispatch) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(3), asynq.Timeout(2 * time.Minute),
		asynq.TaskID("webhook-dispatch:" + p.EventID.String()), asynq.Retention(time.Hour)}
}

// WebhookDeliver is a later attempt to deliver one event to one webhook.
type WebhookDeliver struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	WebhookID      uuid.UUID `json:"webhook_id"`
	EventID        uuid.UUID `json:"event_id"`
	Attempt        int       `json:"attempt"`
}

// Kind implements Payload.
func (WebhookDeliver) Kind() string { return KindWebhookDeliver }

// Options: one task per attempt. The handler schedules the next attempt
// itself; the asynq retry only covers a crashed worker.
func (p WebhookDeliver) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(1), asynq.Timeout(time.Minute),
		asynq.TaskID(fmt.Sprintf("webhook-deliver:%s:%s:%d", p.EventID, p.WebhookID, p.Attempt)), asynq.Retention(time.Hour)}
}
