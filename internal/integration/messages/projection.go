package messages

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/webhooks"
	"wharf/models"
)

// An Outgoing Platform Message is a projection of its core message (the
// core row is the truth): the hook that queues the core message marks it
// projected (messaging.Project), so that every change of the row (the
// provider's acceptance, a refusal, the statuses of the provider's
// webhooks: delivered, read, failed) records message.changed in the events
// outbox in the change's own transaction. The outbox's dispatch gives the
// event to Consume, which applies the row as it is now to the document.
// Dispatch is at least once (a lost task is enqueued again by the outbox's
// sweeper) and the projection is an upsert by the core id that only moves
// forward, so a repeated or late event changes nothing.

// Consume is the projector: the integration's webhooks.Subscriber.
func (s *Service) Consume(ctx context.Context, orgID uuid.UUID, event string, data []byte) error {
	if event != webhooks.EventMessageChanged {
		return nil
	}
	var d struct {
		MessageID uuid.UUID `json:"message_id"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		s.Log.Error("wharfapp: a message.changed event without a message id", "data", string(data), "error", err)
		return nil
	}
	_, _, err := s.projectMessage(ctx, orgID, d.MessageID)
	return err
}

var _ webhooks.Subscriber = (*Service)(nil)

// projectMessage applies a core message to the Platform Message that
// projects it (the one whose core_message_id it is): the provider's id when
// the document has none, the status forward only, the error of a failure.
// It answers what the document then holds; no document, or no message,
// changes nothing.
func (s *Service) projectMessage(ctx context.Context, orgID, coreID uuid.UUID) (msgID, status string, err error) {
	m, err := s.Messaging.Get(ctx, orgID, coreID)
	if apperr.Is(err, apperr.NotFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	var publish func(context.Context)
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		names, err := s.frame.NamesBy(ctx, tx, orgID, DoctypeMessage, "core_message_id", []string{coreID.String()})
		if err != nil || names[coreID.String()] == "" {
			return err
		}
		// Locked: the status computed here cannot be overtaken before it is
		// written (a projection of a later change waits, then sees it).
		doc, err := s.frame.LockDoc(ctx, tx, orgID, DoctypeMessage, names[coreID.String()])
		if err != nil {
			return err
		}
		change := messageChange(str(doc.Get("message_id")), str(doc.Get("status")), m)
		msgID, status = str(doc.Get("message_id")), str(doc.Get("status"))
		if v, ok := change["message_id"]; ok {
			msgID = v.(string)
		}
		if v, ok := change["status"]; ok {
			status = v.(string)
		}
		if len(change) == 0 {
			return nil
		}
		_, publish, err = s.frame.UpdateDocIn(ctx, tx, orgID, By, DoctypeMessage, doc.Name, change)
		return err
	})
	if err != nil {
		return "", "", err
	}
	if publish != nil {
		publish(ctx)
	}
	return msgID, status, nil
}

// messageChange is what a core message changes in a Platform Message that
// holds msgID and status.
func messageChange(msgID, status string, m *models.Message) map[string]any {
	change := map[string]any{}
	if msgID == "" && m.PlatformMessageID != nil && *m.PlatformMessageID != "" {
		change["message_id"] = *m.PlatformMessageID
	}
	if next := string(m.Status); forward(status, next) {
		change["status"] = next
		if next == StatusFailed {
			change["error"] = m.ErrorTitle
			if m.ErrorDetail != "" {
				change["error"] = m.ErrorTitle + ": " + m.ErrorDetail
			}
		}
	}
	return change
}
