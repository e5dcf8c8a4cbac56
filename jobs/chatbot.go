package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// Task types of the chatbot.
const (
	TypeChatbotEvaluate = "chatbot:evaluate"
	TypeChatbotSweep    = "chatbot:sweep"
)

// ChatbotEvaluate evaluates a contact's incoming messages waiting in the
// chatbot's inbox, oldest first, and sends the replies. Duplicates are
// harmless: the handler takes whatever is waiting, under the contact's
// lock.
type ChatbotEvaluate struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	ContactID      uuid.UUID `json:"contact_id"`
}

// TaskType implements Payload.
func (ChatbotEvaluate) TaskType() string { return TypeChatbotEvaluate }

// Options: critical (a customer waits for the answer); the timeout covers
// an AI call per waiting message.
func (ChatbotEvaluate) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueCritical), asynq.MaxRetry(10), asynq.Timeout(5 * time.Minute)}
}

// ChatbotSweep re-enqueues evaluations whose task was lost, ends sessions
// past their timeout and deletes old inbox rows.
type ChatbotSweep sweep

// TaskType implements Payload.
func (ChatbotSweep) TaskType() string { return TypeChatbotSweep }

// Options implements optioner.
func (p ChatbotSweep) Options() []asynq.Option { return sweepOptions("chatbot-sweep", p.Tick) }
