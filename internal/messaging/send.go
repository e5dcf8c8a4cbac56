package messaging

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/outbound"
	"wharf/internal/webhooks"
	"wharf/models"
	"wharf/platform"
)

// Sent is the answer to a synchronous send.
type Sent struct {
	ID                uuid.UUID
	PlatformMessageID string
	Status            models.MessageStatus
}

// prepared is a synchronous send ready to go.
type prepared struct {
	typ     string
	content map[string]any
	build   func(to string) platform.Message
	// media, when set, carries the stored media the message keeps (its
	// Media* fields; the rest is ignored).
	media *models.Message
}

// sendNow sends a free-form message and answers once the provider accepted
// it. The contact must have written within the service window.
func (s *Service) sendNow(ctx context.Context, orgID uuid.UUID, actor Actor, contactID uuid.UUID, ob prepared) (*Sent, error) {
	c, err := s.windowContact(ctx, orgID, contactID)
	if err != nil {
		return nil, err
	}
	return s.sendTo(ctx, orgID, actor, c, ob)
}

// windowContact finds the contact in the organization and checks that it
// wrote within the service window: the first thing a free-form send does,
// before any other work on its behalf.
func (s *Service) windowContact(ctx context.Context, orgID, contactID uuid.UUID) (*models.Contact, error) {
	c, err := s.contacts.Contact(ctx, orgID, contactID)
	if err != nil {
		return nil, err
	}
	if c.LastInboundAt == nil || s.now().Sub(*c.LastInboundAt) > ServiceWindow {
		return nil, apperr.Invalidf("the contact has not written in the last 24 hours: outside the customer-service window only templates can be sent")
	}
	return c, nil
}

// sendTo sends ob to a contact found by windowContact, from the contact's
// account (or the organization's default one).
func (s *Service) sendTo(ctx context.Context, orgID uuid.UUID, actor Actor, c *models.Contact, ob prepared) (*Sent, error) {
	a, err := s.accounts.Sender(ctx, orgID, "", c.AccountID)
	if err != nil {
		return nil, err
	}
	return s.sendFrom(ctx, orgID, actor, c, a, ob)
}

// sendFrom sends ob to a contact found by windowContact from account a.
// An actor without a user (a send the system makes on a domain's behalf)
// leaves sent_by empty.
func (s *Service) sendFrom(ctx context.Context, orgID uuid.UUID, actor Actor, c *models.Contact, a *accounts.Account, ob prepared) (*Sent, error) {
	now := s.now()
	var sentBy *uuid.UUID
	if actor.UserID != uuid.Nil {
		sentBy = &actor.UserID
	}
	m := models.Message{ID: uuid.New(), OrganizationID: orgID, ContactID: c.ID, AccountID: &a.ID, Direction: models.DirectionOutgoing,
		Type: ob.typ, Status: models.StatusPending, SentBy: sentBy, APIKeyID: actor.APIKeyID, SendStartedAt: &now,
		OccurredAt: now}
	m.Content.V = ob.content
	if md := ob.media; md != nil {
		m.MediaStatus, m.MediaKey, m.MediaMimeType, m.MediaSize, m.MediaFilename = md.MediaStatus, md.MediaKey, md.MediaMimeType, md.MediaSize, md.MediaFilename
	}
	if err := s.db.WithContext(ctx).Create(&m).Error; err != nil {
		return nil, err
	}
	msg := ob.build(phone.Digits(c.PhoneNumber))
	msg.BizOpaqueCallbackData = m.ID.String()
	r := s.sender.Send(ctx, outbound.Message{Account: a, Priority: outbound.Reply, Message: msg})
	if r.Outcome != outbound.Accepted {
		return nil, s.sendFailed(ctx, &m, r)
	}
	if err := s.markAccepted(ctx, &m, c, a, r.MessageID, actor); err != nil {
		return nil, err
	}
	return &Sent{ID: m.ID, PlatformMessageID: r.MessageID, Status: models.StatusSent}, nil
}

// sendFailed records a send that was not accepted and turns the outcome
// into an error for the caller. When the provider may have received the
// message (the connection broke after sending), the message stays
// pending: its statuses will tell.
func (s *Service) sendFailed(ctx context.Context, m *models.Message, r outbound.Result) error {
	switch r.Outcome {
	case outbound.Unknown:
		return apperr.Upstreamf("the provider did not answer; the message may still be delivered (its status will update)")
	case outbound.Paced:
		s.markFailed(ctx, m.ID, &platform.Error{Message: "the account's messaging tier allowed no send in time"})
		return apperr.TooManyf("the account's messaging tier allows no more sends right now; retry in %s", r.Wait.Round(time.Second)+time.Second)
	}
	pe := r.ProviderError()
	if pe == nil {
		if r.Outcome == outbound.Refused {
			s.markFailed(ctx, m.ID, &platform.Error{Message: r.Err.Error()})
			return apperr.Invalidf("%v", r.Err)
		}
		return r.Err
	}
	s.markFailed(ctx, m.ID, pe)
	switch r.Outcome {
	case outbound.Throttled:
		return apperr.TooManyf("the provider's rate limit was reached (code %d); retry shortly", pe.Code)
	case outbound.Transient:
		return apperr.Upstreamf("the provider failed (code %d: %s); retry", pe.Code, pe.Message)
	}
	return apperr.Invalidf("the provider refused the message (code %d: %s)", pe.Code, providerText(pe))
}

func providerText(pe *platform.Error) string {
	if pe.Details != "" {
		return pe.Message + " - " + pe.Details
	}
	return pe.Message
}

// markFailed records a send the provider refused (synchronous or queued),
// unless a status moved the message on meanwhile; a projected message's
// change is recorded for the projector in the same transaction.
func (s *Service) markFailed(ctx context.Context, id uuid.UUID, pe *platform.Error) {
	ctx = context.WithoutCancel(ctx)
	code := pe.Code
	var event uuid.UUID
	var row struct {
		OrganizationID uuid.UUID
		Projected      bool
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Raw(`UPDATE messages SET status = ?, failed_at = ?, error_code = ?, error_title = ?, error_detail = ?, updated_at = ?
			WHERE id = ? AND status = ? RETURNING organization_id, projected`,
			models.StatusFailed, s.now(), code, apperr.Clip(pe.Message, 300), apperr.Clip(pe.Details, 1000), s.now(),
			id, models.StatusPending).Scan(&row).Error
		if err != nil || !row.Projected {
			return err
		}
		event, err = s.recordChange(ctx, tx, row.OrganizationID, id)
		return err
	})
	if err != nil {
		s.log.Warn("cannot record a refused send", "message_id", id, "error", err)
		return
	}
	if row.Projected {
		s.webhooks.Publish(ctx, row.OrganizationID, event)
	}
}

// Project marks a message stored in tx (QueueReply, QueueTemplateIn) as
// projected by a framework document: from then on each of its changes
// records message.changed in the events outbox, in the change's own
// transaction, for the projector (webhooks.Subscriber) to apply.
func (s *Service) Project(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID) error {
	return tx.WithContext(ctx).Exec(`UPDATE messages SET projected = true WHERE id = ? AND organization_id = ?`, id, orgID).Error
}

// recordChange records that a projected message changed (the projector
// reads the row itself).
func (s *Service) recordChange(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID) (uuid.UUID, error) {
	return s.webhooks.Record(ctx, tx, orgID, webhooks.EventMessageChanged, map[string]any{"message_id": id})
}

// markAccepted stores the provider's id, moves the message to sent, and
// announces it. When no webhook takes the announcement, that is one
// statement committed on its own; otherwise one transaction with the events.
func (s *Service) markAccepted(ctx context.Context, m *models.Message, c *models.Contact, a *accounts.Account, platformID string, actor Actor) error {
	listening, err := s.webhooks.Listens(context.WithoutCancel(ctx), s.db, m.OrganizationID, announcements(actor)...)
	if err != nil {
		return err
	}
	return s.settleAccepted(ctx, m, c, a, platformID, actor, listening)
}

// announcements are the events of an accepted send.
func announcements(actor Actor) []string {
	names := []string{webhooks.EventMessageOutgoing}
	if actor.APIKeyID == nil && actor.UserID != uuid.Nil {
		names = append(names, webhooks.EventMessageSent)
	}
	return names
}

// settleAccepted is markAccepted once it is known whether a webhook
// listens (the send claim reads it).
func (s *Service) settleAccepted(ctx context.Context, m *models.Message, c *models.Contact, a *accounts.Account, platformID string, actor Actor, listening bool) error {
	ctx = context.WithoutCancel(ctx)
	now := s.now()
	names := announcements(actor)
	// A status webhook may already have matched the message through its
	// callback data; then only the id is left to set. The contact's last
	// activity and the inbox's preview move in the same statement.
	settle := func(db *gorm.DB) error {
		return db.Exec(`WITH sent AS (UPDATE messages SET platform_message_id = COALESCE(platform_message_id, ?),
			status = CASE WHEN status = 'pending' THEN 'sent' ELSE status END,
			sent_at = COALESCE(sent_at, ?), updated_at = now() WHERE id = ? RETURNING id)
			UPDATE contacts SET
				last_message_preview = CASE WHEN ? >= COALESCE(last_message_at, '-infinity') THEN ? ELSE last_message_preview END,
				last_message_direction = CASE WHEN ? >= COALESCE(last_message_at, '-infinity') THEN ? ELSE last_message_direction END,
				last_message_at = GREATEST(COALESCE(last_message_at, ?), ?), updated_at = now() WHERE id = ?`,
			platformID, now, m.ID, now, Preview(m.Type, m.Content.V), now, models.DirectionOutgoing, now, now, c.ID).Error
	}
	if !listening && !m.Projected {
		if err := settle(s.db.WithContext(ctx)); err != nil {
			return err
		}
		m.PlatformMessageID, m.Status, m.SentAt = &platformID, models.StatusSent, &now
		s.live.Publish(ctx, m.OrganizationID, messageEvent(m, c, s.holdersOf(ctx, s.db, m.OrganizationID, c.ID)[c.ID]))
		return nil
	}
	var events []uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := settle(tx); err != nil {
			return err
		}
		m.PlatformMessageID, m.Status, m.SentAt = &platformID, models.StatusSent, &now
		if m.Projected {
			id, err := s.recordChange(ctx, tx, m.OrganizationID, m.ID)
			if err != nil {
				return err
			}
			events = append(events, id)
		}
		if !listening {
			return nil
		}
		data := eventData(m, c, a.Name)
		for i := len(names) - 1; i >= 0; i-- { // message.sent first, as before
			id, err := s.webhooks.Emit(ctx, tx, m.OrganizationID, names[i], data)
			if err != nil {
				return err
			}
			events = append(events, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.live.Publish(ctx, m.OrganizationID, messageEvent(m, c, s.holdersOf(ctx, s.db, m.OrganizationID, c.ID)[c.ID]))
	s.webhooks.Publish(ctx, m.OrganizationID, events...)
	return nil
}

// SendText sends a text message.
func (s *Service) SendText(ctx context.Context, orgID uuid.UUID, actor Actor, contactID uuid.UUID, text string) (*Sent, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, apperr.Invalidf("text is required")
	}
	if len([]rune(text)) > 4096 {
		return nil, apperr.Invalidf("text must be at most 4096 characters")
	}
	return s.sendNow(ctx, orgID, actor, contactID, prepared{typ: "text", content: map[string]any{"text": text},
		build: func(to string) platform.Message {
			m := platform.NewMessage(to, "text")
			m.Text = &platform.Text{Body: text}
			return m
		}})
}

// Button is a quick-reply button of an interactive message.
type Button struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Interactive is the interactive part of a send.
type Interactive struct {
	Type       string   // button or cta_url
	Body       string   // the message text
	Buttons    []Button // button
	ButtonText string   // cta_url
	URL        string   // cta_url
}

// Interactive message limits.
const (
	MaxButtons     = 3
	MaxButtonTitle = 20
)

// SendInteractive sends quick-reply buttons or a call-to-action link.
func (s *Service) SendInteractive(ctx context.Context, orgID uuid.UUID, actor Actor, contactID uuid.UUID, in Interactive) (*Sent, error) {
	body := strings.TrimSpace(in.Body)
	if body == "" || len([]rune(body)) > 1024 {
		return nil, apperr.Invalidf("interactive.body is required (at most 1024 characters)")
	}
	switch in.Type {
	case "button":
		if len(in.Buttons) == 0 || len(in.Buttons) > MaxButtons {
			return nil, apperr.Invalidf("interactive.buttons must have 1 to %d buttons", MaxButtons)
		}
		buttons := make([]platform.ReplyButton, len(in.Buttons))
		for i, b := range in.Buttons {
			title := strings.TrimSpace(b.Title)
			if title == "" || len([]rune(title)) > MaxButtonTitle {
				return nil, apperr.Invalidf("button %d: title is required and at most %d characters", i+1, MaxButtonTitle)
			}
			id := strings.TrimSpace(b.ID)
			if id == "" {
				id = "btn_" + strconv.Itoa(i+1)
			}
			buttons[i] = platform.ReplyButton{Type: "reply", Reply: platform.ReplyDetail{ID: id, Title: title}}
			in.Buttons[i] = Button{ID: id, Title: title}
		}
		return s.sendNow(ctx, orgID, actor, contactID, prepared{typ: "interactive",
			content: map[string]any{"type": "button", "body": body, "buttons": in.Buttons},
			build: func(to string) platform.Message {
				m := platform.NewMessage(to, "interactive")
				m.Interactive = &platform.Interactive{Type: "button", Body: &platform.InteractiveText{Text: body},
					Action: platform.InteractiveAction{Buttons: buttons}}
				return m
			}})
	case "cta_url":
		label := strings.TrimSpace(in.ButtonText)
		if label == "" || len([]rune(label)) > MaxButtonTitle {
			return nil, apperr.Invalidf("interactive.button_text is required and at most %d characters", MaxButtonTitle)
		}
		if err := httpURL(in.URL); err != nil {
			return nil, apperr.Invalidf("interactive.url %v", err)
		}
		return s.sendNow(ctx, orgID, actor, contactID, prepared{typ: "interactive",
			content: map[string]any{"type": "cta_url", "body": body, "button_text": label, "url": in.URL},
			build: func(to string) platform.Message {
				m := platform.NewMessage(to, "interactive")
				m.Interactive = &platform.Interactive{Type: "cta_url", Body: &platform.InteractiveText{Text: body},
					Action: platform.InteractiveAction{Name: "cta_url", Parameters: platform.CTAURLParameters{DisplayText: label, URL: in.URL}}}
				return m
			}})
	}
	return nil, apperr.Invalidf("interactive.type must be button or cta_url")
}
