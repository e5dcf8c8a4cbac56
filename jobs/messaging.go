package jobs

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task types of messaging, inbound webhooks and outbound webhooks.
const (
	TypeInboundProcess  = "inbound:process"
	TypeInboundStatuses = "inbound:statuses"
	TypeInboundSweep    = "inbound:sweep"
	TypeMessageSend     = "message:send"
	TypeMessageSweep    = "message:sweep_unconfirmed"
	TypeAccountRefresh  = "account:refresh"
	TypeWebhookDispatch = "webhook:dispatch"
	TypeWebhookDeliver  = "webhook:deliver"
	TypeEventsSweep     = "events:sweep"
)

// InboundProcess applies the stored inbound events of one contact of one
// account, in arrival order. Duplicates are harmless: the handler takes
// whatever is pending.
type InboundProcess struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	AccountID      uuid.UUID `json:"account_id"`
	ContactKey     string    `json:"contact_key"`
}

// TaskType implements Payload.
func (InboundProcess) TaskType() string { return TypeInboundProcess }

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

// TaskType implements Payload.
func (InboundStatuses) TaskType() string { return TypeInboundStatuses }

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

// TaskType implements Payload.
func (InboundSweep) TaskType() string { return TypeInboundSweep }

// Options implements optioner.
func (p InboundSweep) Options() []asynq.Option { return sweepOptions("inbound-sweep", p.Tick) }

// EventsSweep re-enqueues outbound events whose dispatch task was lost.
type EventsSweep sweep

// TaskType implements Payload.
func (EventsSweep) TaskType() string { return TypeEventsSweep }

// Options implements optioner.
func (p EventsSweep) Options() []asynq.Option { return sweepOptions("events-sweep", p.Tick) }

// MessageSweep resolves outbound sends whose outcome stayed unknown.
type MessageSweep sweep

// TaskType implements Payload.
func (MessageSweep) TaskType() string { return TypeMessageSweep }

// Options implements optioner.
func (p MessageSweep) Options() []asynq.Option { return sweepOptions("message-sweep", p.Tick) }

func sweepOptions(name string, tick time.Time) []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueLow), asynq.MaxRetry(1), asynq.Timeout(5 * time.Minute),
		asynq.TaskID(fmt.Sprintf("%s:%d", name, tick.Unix())), asynq.Retention(10 * time.Minute)}
}

// MessageSendMaxRetry is the message:send task's MaxRetry.
const MessageSendMaxRetry = 8

// MessageSendAttempts is how many times a queued send is tried at most
// when the provider keeps failing (a transient error): its task's first run
// and its retries. A message sent in another message's batch counts its
// tries on its row (messages.send_attempts), so it has the same bound.
const MessageSendAttempts = MessageSendMaxRetry + 1

// MessageSend sends one queued outbound message (template sends), and With,
// the messages queued in the same commit (a group of concurrent API sends:
// one task for up to messaging.QueuedBatch of them).
type MessageSend struct {
	OrganizationID uuid.UUID   `json:"organization_id"`
	MessageID      uuid.UUID   `json:"message_id"`
	With           []uuid.UUID `json:"with,omitempty"`
}

// TaskType implements Payload.
func (MessageSend) TaskType() string { return TypeMessageSend }

// Options: one task per message.
func (p MessageSend) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueCritical), asynq.MaxRetry(MessageSendMaxRetry), asynq.Timeout(time.Minute),
		asynq.TaskID("message-send:" + p.MessageID.String()), asynq.Retention(time.Hour)}
}

// AccountRefresh reads an account's phone number details from the provider.
type AccountRefresh struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	AccountID      uuid.UUID `json:"account_id"`
}

// TaskType implements Payload.
func (AccountRefresh) TaskType() string { return TypeAccountRefresh }

// Options implements optioner.
func (AccountRefresh) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(5), asynq.Timeout(time.Minute)}
}

// WebhookDispatch delivers one event to every subscribed webhook.
type WebhookDispatch struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	EventID        uuid.UUID `json:"event_id"`
}

// TaskType implements Payload.
func (WebhookDispatch) TaskType() string { return TypeWebhookDispatch }

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

// TaskType implements Payload.
func (WebhookDeliver) TaskType() string { return TypeWebhookDeliver }

// Options: one task per attempt. The handler schedules the next attempt
// itself; the asynq retry only covers a crashed worker.
func (p WebhookDeliver) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(1), asynq.Timeout(time.Minute),
		asynq.TaskID(fmt.Sprintf("webhook-deliver:%s:%s:%d", p.EventID, p.WebhookID, p.Attempt)), asynq.Retention(time.Hour)}
}

// TypeMediaFetch fetches a received message's media from the provider.
const TypeMediaFetch = "media:fetch"

// MediaFetch copies the media of one received message from the provider
// into our storage. One task per message (TaskID); the handler does nothing
// for a message whose media is no longer pending.
type MediaFetch struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	MessageID      uuid.UUID `json:"message_id"`
}

// TaskType implements Payload.
func (MediaFetch) TaskType() string { return TypeMediaFetch }

// Options: five retries with asynq's growing backoff (seconds, then
// minutes); after the last the message's media is marked unavailable.
func (p MediaFetch) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(5), asynq.Timeout(5 * time.Minute),
		asynq.TaskID("media-fetch:" + p.MessageID.String()), asynq.Retention(time.Hour)}
}

// TypeMediaSweep re-enqueues lost media fetches.
const TypeMediaSweep = "media:sweep"

// MediaSweep re-enqueues the fetches of received media still pending after
// ten minutes whose task was lost (a crash between the commit and the
// enqueue, Redis restarted without persistence).
type MediaSweep sweep

// TaskType implements Payload.
func (MediaSweep) TaskType() string { return TypeMediaSweep }

// Options implements optioner.
func (p MediaSweep) Options() []asynq.Option { return sweepOptions("media-sweep", p.Tick) }
