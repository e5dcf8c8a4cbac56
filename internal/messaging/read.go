package messaging

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/live"
	"wharf/models"
	"wharf/platform"
)

// MarkRead marks an incoming message as read at the provider and here.
func (s *Service) MarkRead(ctx context.Context, orgID, id uuid.UUID) error {
	m, err := s.Get(ctx, orgID, id)
	if err != nil {
		return err
	}
	if m.Direction != models.DirectionIncoming || m.PlatformMessageID == nil {
		return apperr.Invalidf("only incoming messages can be marked as read")
	}
	_, err = s.sendReadReceipt(ctx, orgID, m)
	return err
}

// sendReadReceipt sends the provider's read receipt of the incoming message
// m once: it first claims the message (status to read, only if it was not),
// so that of two concurrent calls only one reaches the provider, and a
// second call sends nothing. When the provider fails, the claim is undone
// so that a retry sends it. sent says whether this call sent it.
func (s *Service) sendReadReceipt(ctx context.Context, orgID uuid.UUID, m *models.Message) (sent bool, err error) {
	if m.Status == models.StatusRead {
		return false, nil
	}
	if m.AccountID == nil {
		return false, apperr.Invalidf("the message's account was disconnected")
	}
	a, err := s.accounts.Get(ctx, orgID, *m.AccountID)
	if err != nil {
		return false, err
	}
	now := s.now()
	claim := s.db.WithContext(ctx).Model(&models.Message{}).Where("id = ? AND status <> ?", m.ID, models.StatusRead).
		Updates(map[string]any{"status": models.StatusRead, "read_at": now, "updated_at": now})
	if claim.Error != nil || claim.RowsAffected == 0 {
		return false, claim.Error // read meanwhile, by another call
	}
	if err := s.provider.MarkRead(ctx, a.Creds(), *m.PlatformMessageID); err != nil {
		s.db.WithContext(context.WithoutCancel(ctx)).Model(&models.Message{}).Where("id = ? AND status = ?", m.ID, models.StatusRead).
			Updates(map[string]any{"status": m.Status, "read_at": m.ReadAt, "updated_at": s.now()})
		if platform.ClassOf(err) == platform.Permanent {
			return false, apperr.Invalidf("the provider refused: %v", err)
		}
		return false, apperr.Upstreamf("the provider failed: %v", err)
	}
	return true, nil
}

// ConversationRead is what marking a conversation read did.
type ConversationRead struct {
	ContactID uuid.UUID `json:"contact_id"`
	// UnreadCount: incoming messages still unread (those that arrived
	// after the one the receipt was for; usually 0).
	UnreadCount int `json:"unread_count"`
	// ReceiptSent: this call sent the provider's read receipt (false when
	// there was no incoming message, or it was already read).
	ReceiptSent bool `json:"receipt_sent"`
	// ReadMessageID: the last incoming message, now read (null without one).
	ReadMessageID *uuid.UUID `json:"read_message_id"`
}

// MarkConversationRead marks a contact's conversation read (PUT
// /api/contacts/{id}/read): the provider's read receipt for its last
// incoming message, once (the provider takes it as read up to there), and
// the contact's unread count down to the incoming messages stored after
// that one. It publishes contact.read so the user's other tabs and the
// contact's other readers clear their badge.
func (s *Service) MarkConversationRead(ctx context.Context, orgID, contactID uuid.UUID) (*ConversationRead, error) {
	c, err := s.contacts.Contact(ctx, orgID, contactID)
	if err != nil {
		return nil, err
	}
	out := &ConversationRead{ContactID: c.ID}
	var last models.Message
	err = s.db.WithContext(ctx).Where("organization_id = ? AND contact_id = ? AND direction = ? AND platform_message_id IS NOT NULL",
		orgID, c.ID, models.DirectionIncoming).Order("occurred_at DESC, created_at DESC, id DESC").Take(&last).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
	case err != nil:
		return nil, err
	case last.AccountID == nil:
		// Its account was disconnected: no receipt can go, and the
		// conversation is still read here.
		out.ReadMessageID = &last.ID
	default:
		if out.ReceiptSent, err = s.sendReadReceipt(ctx, orgID, &last); err != nil {
			return nil, err
		}
		out.ReadMessageID = &last.ID
	}
	// Unread is what came in after the message just read; counted, not
	// set to 0, so that a message stored during the provider's call stays
	// unread.
	var after string
	var args []any
	if out.ReadMessageID != nil {
		after = " AND (m.occurred_at, m.created_at, m.id) > (?, ?, ?)"
		args = []any{last.OccurredAt, last.CreatedAt, last.ID}
	}
	var counts []struct{ Before, After int }
	err = s.db.WithContext(ctx).Raw(`WITH old AS (SELECT unread_count FROM contacts WHERE id = ? AND organization_id = ? FOR UPDATE)
		UPDATE contacts SET unread_count = (SELECT count(*) FROM messages m WHERE m.contact_id = contacts.id
			AND m.direction = 'incoming'`+after+`)
		FROM old WHERE contacts.id = ? RETURNING old.unread_count AS before, contacts.unread_count AS after`,
		append(append([]any{c.ID, orgID}, args...), c.ID)...).Scan(&counts).Error
	if err != nil {
		return nil, err
	}
	if len(counts) == 0 {
		return nil, apperr.NotFoundf("contact not found") // deleted meanwhile
	}
	out.UnreadCount = counts[0].After
	if counts[0].Before != counts[0].After || out.ReceiptSent {
		s.live.Publish(ctx, orgID, live.New(live.ContactRead, LiveRead{ContactID: c.ID, UnreadCount: out.UnreadCount},
			messageAudience(c.AssignedTo, s.holdersOf(ctx, s.db, orgID, c.ID)[c.ID])).WithContact(liveContact(c)))
	}
	return out, nil
}
