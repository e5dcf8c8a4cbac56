package chatbot

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/jobs"
	"wharf/platform"
)

// ConsumeMessage is the chatbot's inbound.MessageConsumer (registered after
// messaging, which stored the message): when the organization's chatbot is
// on, it puts a text, button, list or flow reply in the chatbot's inbox,
// in the inbound transaction (so it is there exactly when the message is),
// and asks for the contact's evaluation after the commit.
func (s *Service) ConsumeMessage(ctx context.Context, tx *gorm.DB, in *inbound.Incoming) (inbound.MessageResult, error) {
	// A message messaging answered as an opt-out or opt-in keyword is not
	// the bot's to answer: STOP never starts or moves a flow.
	if in.MessageID == uuid.Nil || in.Answered || !evaluable(in.Message) {
		return inbound.MessageResult{}, nil
	}
	orgID, contactID := in.Contact.OrganizationID, in.Contact.ID
	// One statement: the row goes in only when the chatbot is on.
	res := tx.WithContext(ctx).Exec(`INSERT INTO chatbot_inbox (message_id, organization_id, contact_id, received_at)
		SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chatbot_settings WHERE organization_id = ? AND chatbot_enabled)
		ON CONFLICT (message_id) DO NOTHING`, in.MessageID, orgID, contactID, s.now(), orgID)
	if res.Error != nil || res.RowsAffected == 0 {
		// Off, or a message delivered twice (the first delivery asked).
		return inbound.MessageResult{}, res.Error
	}
	return inbound.MessageResult{AfterCommit: func(ctx context.Context) { s.evaluateNow(ctx, orgID, contactID) }}, nil
}

// evaluateNow evaluates the contact's waiting messages in the inbound task
// that stored them, right after its commit, instead of in a chatbot:evaluate
// task of their own: the queue's round trip (enqueue, poll, dequeue and done,
// three Redis scripts) was about a third of a reply's median latency at 200
// messages a second, and a quarter of Redis's CPU a message (docs/BENCHMARKS.md,
// "Chatbot replies, round 3"). Both tasks run in the critical queue, so the worker's
// slots are spent as before. Whatever cannot be finished now goes to a task,
// as before: the contact's lock held by another evaluation, the
// organization at its share of the worker, more messages after the first
// batch, an error.
func (s *Service) evaluateNow(ctx context.Context, orgID, contactID uuid.UUID) {
	err := s.evaluate(ctx, orgID, contactID, true)
	if err == nil {
		return
	}
	var busy *jobs.RateLimited
	if !errors.As(err, &busy) && !errors.Is(err, errMore) {
		s.log.Warn("chatbot evaluation failed; a task retries it", "contact_id", contactID, "error", err)
	}
	s.enqueue(ctx, orgID, contactID)
}

// evaluable reports the incoming messages the bot answers: text, reply
// buttons and list choices, template quick replies and flow replies.
func evaluable(m platform.IncomingMessage) bool {
	switch m.Type {
	case "text", "button":
		return true
	case "interactive":
		return m.Interactive != nil && (m.Interactive.ButtonReply != nil || m.Interactive.ListReply != nil || m.Interactive.NFMReply != nil)
	}
	return false
}

func (s *Service) enqueue(ctx context.Context, orgID, contactID uuid.UUID) {
	if _, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.ChatbotEvaluate{OrganizationID: orgID, ContactID: contactID}); err != nil &&
		!errors.Is(err, jobs.ErrDuplicate) {
		s.log.Warn("cannot enqueue a chatbot evaluation; the sweeper will retry", "contact_id", contactID, "error", err)
	}
}

// inboxAge is how long a message may wait in the inbox before the sweeper
// assumes its evaluation task was lost.
const inboxAge = 30 * time.Second

// Sweep re-enqueues evaluations whose task was lost, ends sessions past
// their organization's timeout, and deletes inbox rows evaluated more than
// three days ago.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	var keys []struct{ OrganizationID, ContactID uuid.UUID }
	if err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT organization_id, contact_id FROM chatbot_inbox
		WHERE evaluated_at IS NULL AND received_at < ? LIMIT 1000`, s.now().Add(-inboxAge)).Scan(&keys).Error; err != nil {
		return 0, err
	}
	for _, k := range keys {
		s.enqueue(ctx, k.OrganizationID, k.ContactID)
	}
	if err := s.db.WithContext(ctx).Exec(`UPDATE chatbot_sessions ss SET ended_at = now(), end_reason = 'timeout'
		FROM (SELECT s.id FROM chatbot_sessions s LEFT JOIN chatbot_settings st ON st.organization_id = s.organization_id
		      WHERE s.ended_at IS NULL AND s.last_activity < now() - make_interval(mins => COALESCE(st.session_timeout_minutes, 30))
		      LIMIT 1000) old WHERE ss.id = old.id`).Error; err != nil {
		return len(keys), err
	}
	err := s.db.WithContext(ctx).Exec(`DELETE FROM chatbot_inbox WHERE evaluated_at < ?`, s.now().Add(-72*time.Hour)).Error
	return len(keys), err
}
