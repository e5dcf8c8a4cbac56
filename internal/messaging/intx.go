package messaging

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/templates"
	"wharf/jobs"
	"wharf/models"
)

// Sends stored inside a caller's transaction (the document framework's
// Outgoing Platform Messages): the message is written pending in tx, so it
// exists exactly when the caller's work commits, and is sent by the
// message:send job like a queued template send (claimed before the
// provider call; the sweeper enqueues one whose task was lost). Free-form
// messages use QueueReply; templates use QueueTemplateIn.

// QueueTemplateIn stores a template send to the contact, pending, inside
// tx, after checking the parameters against the template (tmpl: a
// template the caller found sendable for the account). It answers the
// message's id for EnqueueSend.
func (s *Service) QueueTemplateIn(ctx context.Context, tx *gorm.DB, orgID, contactID, accountID uuid.UUID, tmpl *models.Template,
	values map[string]string) (uuid.UUID, error) {
	if _, err := templates.Build(tmpl, values); err != nil {
		return uuid.Nil, err
	}
	params := make(map[string]any, len(values))
	for k, v := range values {
		params[k] = v
	}
	m := models.Message{ID: uuid.New(), OrganizationID: orgID, ContactID: contactID, AccountID: &accountID,
		Direction: models.DirectionOutgoing, Type: "template", Status: models.StatusPending, TemplateName: tmpl.Name,
		TemplateID: &tmpl.ID, OccurredAt: s.now()}
	m.Content.V = map[string]any{"template_id": tmpl.ID, "template_name": tmpl.Name, "language": tmpl.Language,
		"params": params, "text": templates.Describe(tmpl, values)}
	return m.ID, tx.WithContext(ctx).Create(&m).Error
}

// EnqueueSend enqueues the message:send job of a message stored pending
// (QueueReply, QueueTemplateIn), once its transaction committed. A lost
// enqueue is not an error: the sweeper enqueues pending messages whose
// task is missing.
func (s *Service) EnqueueSend(ctx context.Context, orgID, id uuid.UUID) {
	if _, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.MessageSend{OrganizationID: orgID, MessageID: id}); err != nil &&
		!errors.Is(err, jobs.ErrDuplicate) {
		s.log.Warn("cannot enqueue a queued send; the sweeper will retry", "message_id", id, "error", err)
	}
}
