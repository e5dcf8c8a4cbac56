package messaging

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/infra/phone"
	"wharf/internal/webhooks"
	"wharf/models"
	"wharf/platform"
)

// ConsumeMessage is the messaging domain's inbound.MessageConsumer: it
// stores the message (once: a redelivered message is Seen), applies it when
// it is an opt-out or opt-in keyword (optout.go), and publishes its events
// after the commit.
func (s *Service) ConsumeMessage(ctx context.Context, tx *gorm.DB, in *inbound.Incoming) (inbound.MessageResult, error) {
	m, eventID, err := s.storeIncoming(ctx, tx, in.Contact, in.Account.ID, in.Account.Name, in.Message)
	if err != nil || m == nil {
		return inbound.MessageResult{Seen: err == nil}, err
	}
	org, contact := in.Contact.OrganizationID, *in.Contact
	ev := messageEvent(m, &contact, s.holdersOf(ctx, tx, org, contact.ID)[contact.ID])
	answered, after, err := s.keywordReply(ctx, tx, in)
	if err != nil {
		return inbound.MessageResult{}, err
	}
	return inbound.MessageResult{Stored: m.ID, Answered: answered,
		AfterCommit: func(ctx context.Context) {
			if m.MediaStatus != nil {
				s.enqueueFetch(ctx, org, m.ID)
			}
			s.live.Publish(ctx, org, ev)
			s.webhooks.Publish(ctx, org, eventID)
			if after != nil {
				after(ctx)
			}
		}}, nil
}

// storeIncoming stores an incoming message once (the provider redelivers
// webhooks: a known message id changes nothing), keeps the contact's
// activity times, and emits message.incoming. It returns the new message's
// message and the event id to publish after the commit, or nil for a
// message stored before.
func (s *Service) storeIncoming(ctx context.Context, tx *gorm.DB, c *models.Contact, accountID uuid.UUID, accountName string, in platform.IncomingMessage) (*models.Message, uuid.UUID, error) {
	typ, content := incomingContent(in)
	at := unixTime(in.Timestamp, s.now())
	m := models.Message{ID: uuid.New(), OrganizationID: c.OrganizationID, ContactID: c.ID, AccountID: &accountID,
		PlatformMessageID: &in.ID, Direction: models.DirectionIncoming, Type: typ, Status: models.StatusDelivered, OccurredAt: at}
	m.Content.V = content
	if hasMedia(typ, content) {
		pending := models.MediaPending
		m.MediaStatus = &pending
	}
	// created_at is the wall clock of the insert, not of the transaction's
	// start: a contact's events are applied one after another, so it records
	// the order of application, the tiebreaker within one second.
	//
	// The inbox's columns move in the same statement, only when the message
	// is new: one more unread message, and the preview when this message is
	// the latest (SET reads the row as it was, so the CASE compares with the
	// previous last one).
	var inserted int
	err := tx.WithContext(ctx).Raw(`WITH m AS (INSERT INTO messages (id, organization_id, contact_id, account_id, platform_message_id,
		direction, type, content, status, occurred_at, media_status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, clock_timestamp())
		ON CONFLICT (account_id, platform_message_id) WHERE platform_message_id IS NOT NULL DO NOTHING RETURNING id),
	c AS (UPDATE contacts SET
		unread_count = unread_count + 1,
		last_message_preview = CASE WHEN ? >= COALESCE(last_message_at, '-infinity') THEN ? ELSE last_message_preview END,
		last_message_direction = CASE WHEN ? >= COALESCE(last_message_at, '-infinity') THEN ? ELSE last_message_direction END,
		last_message_at = GREATEST(COALESCE(last_message_at, ?), ?),
		last_inbound_at = GREATEST(COALESCE(last_inbound_at, ?), ?), updated_at = now() WHERE id = ? AND EXISTS (SELECT 1 FROM m))
	SELECT count(*) FROM m`,
		m.ID, m.OrganizationID, m.ContactID, accountID, in.ID, m.Direction, m.Type, m.Content, m.Status, at, m.MediaStatus,
		at, Preview(typ, content), at, models.DirectionIncoming, at, at, at, at, c.ID).Scan(&inserted).Error
	if err != nil || inserted == 0 {
		return nil, uuid.Nil, err
	}
	eventID, err := s.webhooks.Emit(ctx, tx, c.OrganizationID, webhooks.EventMessageIncoming, eventData(&m, c, accountName))
	if err != nil {
		return nil, uuid.Nil, err
	}
	return &m, eventID, nil
}

// incomingContent maps a provider message to our type and content: text as
// {text}, flow completions as type "flow" with the parsed response, template
// quick replies as interactive, and every other type with the provider's
// object as it came (so nothing, not even an unsupported type, is lost).
func incomingContent(in platform.IncomingMessage) (string, map[string]any) {
	content := map[string]any{}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(in.Raw, &raw)
	typ := in.Type
	switch {
	case in.Type == "text" && in.Text != nil:
		content["text"] = in.Text.Body
	case in.Type == "interactive" && in.Interactive != nil && in.Interactive.NFMReply != nil:
		typ = "flow"
		var resp any
		if json.Unmarshal([]byte(in.Interactive.NFMReply.ResponseJSON), &resp) != nil {
			resp = in.Interactive.NFMReply.ResponseJSON
		}
		content["name"] = in.Interactive.NFMReply.Name
		content["body"] = in.Interactive.NFMReply.Body
		content["response"] = resp
	case in.Type == "button" && in.Button != nil:
		typ = "interactive"
		content["type"] = "button_reply"
		content["id"] = in.Button.Payload
		content["title"] = in.Button.Text
	default:
		if obj, ok := raw[in.Type]; ok {
			var v any
			if json.Unmarshal(obj, &v) == nil {
				if mv, ok := v.(map[string]any); ok {
					content = mv
				} else {
					content["value"] = v
				}
			}
		}
		if in.Type == "interactive" && in.Interactive != nil {
			switch {
			case in.Interactive.ButtonReply != nil:
				content = map[string]any{"type": "button_reply", "id": in.Interactive.ButtonReply.ID, "title": in.Interactive.ButtonReply.Title}
			case in.Interactive.ListReply != nil:
				content = map[string]any{"type": "list_reply", "id": in.Interactive.ListReply.ID,
					"title": in.Interactive.ListReply.Title, "description": in.Interactive.ListReply.Description}
			}
		}
	}
	if typ == "" {
		typ = "unsupported"
	}
	if in.Context != nil && in.Context.ID != "" {
		content["context"] = map[string]any{"message_id": in.Context.ID, "from": phone.FromWaID(in.Context.From)}
	}
	return typ, content
}

func unixTime(s string, fallback time.Time) time.Time {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return time.Unix(n, 0).UTC()
	}
	return fallback
}
