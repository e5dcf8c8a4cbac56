package inbound

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/statuses"
	"wharf/models"
	"wharf/platform"
)

// A Consumer is a domain that applies inbound events. app/ registers the
// consumers in one list, in order; each implements one or more of
// StatusConsumer, MessageConsumer and EventConsumer. Inbound stores the
// provider's webhooks and dispatches them; it knows no consumer by name.
type Consumer interface {
	// ConsumerName labels the consumer in logs and errors.
	ConsumerName() string
}

// StatusConsumer applies the provider's statuses of outbound messages.
// Status consumers are chained in registration order: each gets the
// outcomes that no consumer before it matched (and is called even when
// none is left, for consumers that mirror the whole batch).
type StatusConsumer interface {
	Consumer
	// ApplyStatuses applies b.Outcomes inside tx, the batch's transaction
	// (statuses of one account, claimed in bulk by parallel workers and
	// reduced to one outcome per message: any order, forward only). It
	// returns the outcomes it did not match, for the next consumer, and
	// optionally work to do after the commit.
	ApplyStatuses(ctx context.Context, tx *gorm.DB, b StatusBatch) (StatusResult, error)
}

// StatusBatch is one batch of one account's statuses.
type StatusBatch struct {
	OrganizationID uuid.UUID
	AccountID      uuid.UUID
	Outcomes       []*statuses.Outcome // those no consumer before this one matched
	All            []*statuses.Outcome // every outcome of the batch, for consumers that mirror rather than match
}

// StatusResult is what a StatusConsumer did with a batch.
type StatusResult struct {
	Unmatched   []*statuses.Outcome   // a subset of the batch's outcomes, passed on
	AfterCommit func(context.Context) // nil, or run once the batch committed
}

// MessageConsumer handles the incoming messages of contacts. It is called
// for each message, in registration order, inside the contact's ordered
// transaction: one contact's messages are consumed one at a time in arrival
// order, under the contact's lock. When a consumer fails, everything done
// for the message's event in tx is rolled back and the event is retried,
// so what a consumer writes in tx happens exactly once; work for after the
// commit (an enqueue) goes in AfterCommit, which runs only if it committed.
type MessageConsumer interface {
	Consumer
	ConsumeMessage(ctx context.Context, tx *gorm.DB, in *Incoming) (MessageResult, error)
}

// Incoming is one incoming message as the consumers see it.
type Incoming struct {
	Account *accounts.Account
	Contact *models.Contact // the sender, found or created before the consumers run
	Message platform.IncomingMessage
	// MessageID is the messages row that stores it, set from the result of
	// the consumer that stored it (messaging, registered first).
	MessageID uuid.UUID
	// Answered: a consumer before this one answered the message as a
	// command of ours (an opt-out or opt-in keyword); consumers that answer
	// messages (the chatbot) leave it.
	Answered bool
}

// MessageResult is what a MessageConsumer did with a message.
type MessageResult struct {
	// Stored is the id of the messages row the consumer stored the message
	// as (the consumers after it read it in Incoming.MessageID).
	Stored uuid.UUID
	// Seen reports a message consumed before (a redelivered webhook): the
	// consumers after this one are not called for it.
	Seen bool
	// Answered: the consumer answered the message as a command of ours
	// (Incoming.Answered for the consumers after it).
	Answered    bool
	AfterCommit func(context.Context) // nil, or run once the event committed
}

// EventConsumer applies the events of one type other than messages and
// statuses (template status updates; later calls). They are applied like
// messages: in arrival order per account (contact key ""), in a
// transaction, retried on failure. A change of the webhook field goes to
// the account of the number it names (metadata.phone_number_id), else to
// every account of the business account (entry.id).
type EventConsumer interface {
	Consumer
	// EventType is the type of the events it applies: the webhook field's
	// name ("calls"), or EventTemplateStatus.
	EventType() string
	// ConsumeEvent applies one event inside tx and optionally returns work
	// to do after the commit.
	ConsumeEvent(ctx context.Context, tx *gorm.DB, ev *Event) (func(context.Context), error)
}

// Event is a stored event handed to its EventConsumer.
type Event struct {
	ID         int64
	Type       string
	Account    *accounts.Account
	ContactKey string
	Payload    json.RawMessage // the webhook change's value, as the provider sent it
}

// consumers are the registered consumers, by what they consume.
type consumers struct {
	statuses []StatusConsumer
	messages []MessageConsumer
	events   map[string]EventConsumer // by event type
}

// register sorts the consumers by the interfaces they implement. A
// consumer that implements none, or a second consumer for an event type,
// is a wiring mistake.
func register(list []Consumer) (consumers, error) {
	cs := consumers{events: map[string]EventConsumer{}}
	for _, c := range list {
		used := false
		if sc, ok := c.(StatusConsumer); ok {
			cs.statuses, used = append(cs.statuses, sc), true
		}
		if mc, ok := c.(MessageConsumer); ok {
			cs.messages, used = append(cs.messages, mc), true
		}
		if ec, ok := c.(EventConsumer); ok {
			if t := ec.EventType(); t == EventMessages || t == EventStatuses {
				return cs, fmt.Errorf("inbound: %s cannot consume %s events: implement MessageConsumer or StatusConsumer", ec.ConsumerName(), t)
			}
			if prev, dup := cs.events[ec.EventType()]; dup {
				return cs, fmt.Errorf("inbound: %s and %s both consume %s events", prev.ConsumerName(), ec.ConsumerName(), ec.EventType())
			}
			cs.events[ec.EventType()], used = ec, true
		}
		if !used {
			return cs, fmt.Errorf("inbound: %s implements no consumer interface", c.ConsumerName())
		}
	}
	return cs, nil
}
