package messaging

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/apperr"
	"wharf/internal/phone"
	"wharf/internal/templates"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// Sent is the answer to a synchronous send.
type Sent struct {
	ID                uuid.UUID
	PlatformMessageID string
	Status            string
}

// outbound is a prepared synchronous send.
type outbound struct {
	typ     string
	content map[string]any
	build   func(to string) platform.Message
}

// sendNow sends a free-form message and answers once the provider accepted
// it. The contact must have written within the service window.
func (s *Service) sendNow(ctx context.Context, orgID uuid.UUID, actor Actor, contactID uuid.UUID, ob outbound) (*Sent, error) {
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

// sendTo sends ob to a contact found by windowContact.
func (s *Service) sendTo(ctx context.Context, orgID uuid.UUID, actor Actor, c *models.Contact, ob outbound) (*Sent, error) {
	a, err := s.accounts.ForSending(ctx, orgID, "", c.AccountID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	m := models.Message{ID: uuid.New(), OrganizationID: orgID, ContactID: c.ID, AccountID: &a.ID, Direction: models.DirectionOutgoing,
		Type: ob.typ, Status: models.StatusPending, SentBy: &actor.UserID, APIKeyID: actor.APIKeyID, SendStartedAt: &now,
		OccurredAt: now}
	m.Content.V = ob.content
	if err := s.db.WithContext(ctx).Create(&m).Error; err != nil {
		return nil, err
	}
	msg := ob.build(phone.Digits(c.PhoneNumber))
	msg.BizOpaqueCallbackData = m.ID.String()
	res, err := s.provider.Send(ctx, a.Creds(), msg)
	if err != nil {
		return nil, s.sendFailed(ctx, &m, err)
	}
	if err := s.markAccepted(ctx, &m, c, a, res.MessageID, actor); err != nil {
		return nil, err
	}
	return &Sent{ID: m.ID, PlatformMessageID: res.MessageID, Status: models.StatusSent}, nil
}

// sendFailed records a refused send and turns the provider's answer into an
// error for the caller. When the provider may have received the message (the
// connection broke after sending), the message stays pending: its statuses
// will tell.
func (s *Service) sendFailed(ctx context.Context, m *models.Message, err error) error {
	pe, ok := platform.AsError(err)
	if !ok {
		return err
	}
	if pe.Code == 0 && pe.Class == platform.Transient {
		return apperr.Upstreamf("the provider did not answer; the message may still be delivered (its status will update)")
	}
	s.markFailed(ctx, m.ID, pe)
	switch pe.Class {
	case platform.Throttled:
		return apperr.TooManyf("the provider's rate limit was reached (code %d); retry shortly", pe.Code)
	case platform.Transient:
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

func (s *Service) markFailed(ctx context.Context, id uuid.UUID, pe *platform.Error) {
	code := pe.Code
	s.db.WithContext(context.WithoutCancel(ctx)).Model(&models.Message{}).Where("id = ? AND status = ?", id, models.StatusPending).
		Updates(map[string]any{"status": models.StatusFailed, "failed_at": s.now(), "error_code": &code,
			"error_title": apperr.Clip(pe.Message, 300), "error_detail": apperr.Clip(pe.Details, 1000), "updated_at": s.now()})
}

// markAccepted stores the provider's id, moves the message to sent, and
// announces it, in one transaction.
func (s *Service) markAccepted(ctx context.Context, m *models.Message, c *models.Contact, a *accounts.Account, platformID string, actor Actor) error {
	now := s.now()
	var events []uuid.UUID
	err := s.db.WithContext(context.WithoutCancel(ctx)).Transaction(func(tx *gorm.DB) error {
		// A status webhook may already have matched the message through its
		// callback data; then only the id is left to set.
		if err := tx.Exec(`UPDATE messages SET platform_message_id = COALESCE(platform_message_id, ?),
			status = CASE WHEN status = 'pending' THEN 'sent' ELSE status END,
			sent_at = COALESCE(sent_at, ?), updated_at = now() WHERE id = ?`, platformID, now, m.ID).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.Contact{}).Where("id = ?", c.ID).
			Update("last_message_at", gorm.Expr("GREATEST(COALESCE(last_message_at, ?), ?)", now, now)).Error; err != nil {
			return err
		}
		m.PlatformMessageID, m.Status, m.SentAt = &platformID, models.StatusSent, &now
		data := eventData(m, c, a.Name)
		if actor.APIKeyID == nil && actor.UserID != uuid.Nil {
			id, err := s.webhooks.Emit(ctx, tx, m.OrganizationID, webhooks.EventMessageSent, data)
			if err != nil {
				return err
			}
			events = append(events, id)
		}
		id, err := s.webhooks.Emit(ctx, tx, m.OrganizationID, webhooks.EventMessageOutgoing, data)
		events = append(events, id)
		return err
	})
	if err != nil {
		return err
	}
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
	return s.sendNow(ctx, orgID, actor, contactID, outbound{typ: "text", content: map[string]any{"text": text},
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
		return s.sendNow(ctx, orgID, actor, contactID, outbound{typ: "interactive",
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
		return s.sendNow(ctx, orgID, actor, contactID, outbound{typ: "interactive",
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

// TemplateInput is the body of POST /api/messages/template.
type TemplateInput struct {
	ContactID    *uuid.UUID
	PhoneNumber  string
	TemplateName string
	TemplateID   *uuid.UUID
	Params       map[string]string
	AccountName  string
}

// Queued is the answer to a template send.
type Queued struct {
	MessageID    uuid.UUID
	PhoneNumber  string
	Status       string
	TemplateName string
}

// QueueTemplate validates a template send, stores the message as pending
// and leaves the sending to the worker. Nothing is stored (not even a new
// contact) when the request is invalid.
func (s *Service) QueueTemplate(ctx context.Context, orgID uuid.UUID, actor Actor, in TemplateInput) (*Queued, error) {
	if in.ContactID == nil && strings.TrimSpace(in.PhoneNumber) == "" {
		return nil, apperr.Invalidf("contact_id or phone_number is required")
	}
	if in.TemplateID == nil && strings.TrimSpace(in.TemplateName) == "" {
		return nil, apperr.Invalidf("template_name or template_id is required")
	}
	var account *accounts.Account
	var err error
	if strings.TrimSpace(in.AccountName) != "" {
		if account, err = s.accounts.ForSending(ctx, orgID, in.AccountName, nil); err != nil {
			return nil, err
		}
	}
	var contact *models.Contact
	number := ""
	if in.ContactID != nil {
		if contact, err = s.contacts.Contact(ctx, orgID, *in.ContactID); err != nil {
			return nil, err
		}
		number = contact.PhoneNumber
	} else if number, err = phone.Normalize(in.PhoneNumber); err != nil {
		return nil, apperr.Invalidf("phone_number: %v", err)
	}
	var tmpl *models.Template
	if in.TemplateID != nil {
		if tmpl, err = s.templates.ForSend(ctx, orgID, accountID(account), in.TemplateID, ""); err != nil {
			return nil, err
		}
		if account == nil {
			if account, err = s.accounts.ForSending(ctx, orgID, "", &tmpl.AccountID); err != nil {
				return nil, err
			}
			if account.ID != tmpl.AccountID {
				return nil, apperr.Invalidf("the template's account is not active")
			}
		}
	} else {
		if account == nil {
			var preferred *uuid.UUID
			if contact != nil {
				preferred = contact.AccountID
			}
			if account, err = s.accounts.ForSending(ctx, orgID, "", preferred); err != nil {
				return nil, err
			}
		}
		if tmpl, err = s.templates.ForSend(ctx, orgID, &account.ID, nil, in.TemplateName); err != nil {
			return nil, err
		}
	}
	if _, err := templates.Build(tmpl, in.Params); err != nil {
		return nil, err
	}
	if contact == nil {
		if contact, err = s.contacts.FindOrCreate(ctx, orgID, number, &account.ID); err != nil {
			return nil, err
		}
	}
	params := make(map[string]any, len(in.Params))
	for k, v := range in.Params {
		params[k] = v
	}
	now := s.now()
	m := models.Message{ID: uuid.New(), OrganizationID: orgID, ContactID: contact.ID, AccountID: &account.ID,
		Direction: models.DirectionOutgoing, Type: "template", Status: models.StatusPending, TemplateName: tmpl.Name,
		SentBy: &actor.UserID, APIKeyID: actor.APIKeyID, OccurredAt: now}
	m.Content.V = map[string]any{"template_id": tmpl.ID, "template_name": tmpl.Name, "language": tmpl.Language,
		"params": params, "text": templates.Describe(tmpl, in.Params)}
	if err := s.db.WithContext(ctx).Create(&m).Error; err != nil {
		return nil, err
	}
	if _, err := s.enq.Enqueue(ctx, jobs.MessageSend{OrganizationID: orgID, MessageID: m.ID}); err != nil && !errors.Is(err, jobs.ErrDuplicate) {
		// The sweeper enqueues pending messages whose task is missing.
		s.log.Warn("cannot enqueue a template send; the sweeper will retry", "message_id", m.ID, "error", err)
	}
	return &Queued{MessageID: m.ID, PhoneNumber: contact.PhoneNumber, Status: models.StatusPending, TemplateName: tmpl.Name}, nil
}

func accountID(a *accounts.Account) *uuid.UUID {
	if a == nil {
		return nil
	}
	return &a.ID
}

// SendQueued is the message:send job. It claims the message first, so a
// duplicate task, or a retry after a crash that happened after the provider
// call, never sends twice. lastAttempt tells it to give up on transient
// errors.
func (s *Service) SendQueued(ctx context.Context, orgID, id uuid.UUID, lastAttempt bool) error {
	var m models.Message
	res := s.db.WithContext(ctx).Raw(`UPDATE messages SET send_started_at = now(), updated_at = now()
		WHERE id = ? AND organization_id = ? AND status = 'pending' AND send_started_at IS NULL AND platform_message_id IS NULL
		RETURNING *`, id, orgID).Scan(&m)
	if res.Error != nil {
		return res.Error
	}
	if m.ID == uuid.Nil {
		return nil // sent, failed, or in the hands of an earlier attempt
	}
	fail := func(code int, title, detail string) error {
		pe := &platform.Error{Code: code, Message: title, Details: detail}
		s.markFailed(ctx, m.ID, pe)
		return nil
	}
	c, err := s.contacts.Contact(ctx, orgID, m.ContactID)
	if err != nil {
		return fail(0, "contact no longer exists", "")
	}
	if m.AccountID == nil {
		return fail(0, "the account was disconnected", "")
	}
	a, err := s.accounts.Get(ctx, orgID, *m.AccountID)
	if err != nil || a.Status != models.AccountActive {
		return fail(0, "the account is not active", "")
	}
	tmplID, _ := uuid.Parse(fmt.Sprint(m.Content.V["template_id"]))
	tmpl, err := s.templates.ForSend(ctx, orgID, &a.ID, &tmplID, "")
	if err != nil {
		return fail(0, "the template can no longer be sent", err.Error())
	}
	values := map[string]string{}
	if p, ok := m.Content.V["params"].(map[string]any); ok {
		for k, v := range p {
			values[k] = fmt.Sprint(v)
		}
	}
	t, err := templates.Build(tmpl, values)
	if err != nil {
		return fail(0, "the template's parameters no longer match", err.Error())
	}
	msg := platform.NewMessage(phone.Digits(c.PhoneNumber), "template")
	msg.Template = &t
	msg.BizOpaqueCallbackData = m.ID.String()
	sent, err := s.provider.Send(ctx, a.Creds(), msg)
	if err == nil {
		return s.markAccepted(ctx, &m, c, a, sent.MessageID, Actor{UserID: deref(m.SentBy), APIKeyID: m.APIKeyID})
	}
	pe, ok := platform.AsError(err)
	switch {
	case !ok:
		return err
	case pe.Code == 0 && pe.Class == platform.Transient:
		// The provider may have the message: leave it claimed; its statuses
		// or the sweeper settle it.
		s.log.Warn("template send outcome unknown", "message_id", m.ID, "error", err)
		return nil
	case pe.Class == platform.Throttled || (pe.Class == platform.Transient && !lastAttempt):
		s.release(ctx, m.ID)
		if pe.Class == platform.Throttled {
			return &jobs.RateLimited{RetryAfter: max(pe.RetryAfter, time.Second), Reason: fmt.Sprintf("provider code %d", pe.Code)}
		}
		return err
	}
	s.markFailed(ctx, m.ID, pe)
	return nil
}

// release undoes a claim when the provider certainly did not take the message.
func (s *Service) release(ctx context.Context, id uuid.UUID) {
	s.db.WithContext(context.WithoutCancel(ctx)).Model(&models.Message{}).Where("id = ? AND status = 'pending' AND platform_message_id IS NULL", id).
		Update("send_started_at", nil)
}

// MarkRead marks an incoming message as read at the provider and here.
func (s *Service) MarkRead(ctx context.Context, orgID, id uuid.UUID) error {
	m, err := s.Get(ctx, orgID, id)
	if err != nil {
		return err
	}
	if m.Direction != models.DirectionIncoming || m.PlatformMessageID == nil {
		return apperr.Invalidf("only incoming messages can be marked as read")
	}
	if m.Status == models.StatusRead {
		return nil
	}
	if m.AccountID == nil {
		return apperr.Invalidf("the message's account was disconnected")
	}
	a, err := s.accounts.Get(ctx, orgID, *m.AccountID)
	if err != nil {
		return err
	}
	if err := s.provider.MarkRead(ctx, a.Creds(), *m.PlatformMessageID); err != nil {
		if platform.ClassOf(err) == platform.Permanent {
			return apperr.Invalidf("the provider refused: %v", err)
		}
		return apperr.Upstreamf("the provider failed: %v", err)
	}
	now := s.now()
	return s.db.WithContext(ctx).Model(&models.Message{}).Where("id = ?", m.ID).
		Updates(map[string]any{"status": models.StatusRead, "read_at": now, "updated_at": now}).Error
}

// Unconfirmed sends are settled after this long without a status.
const unconfirmedAfter = 10 * time.Minute

// SweepUnconfirmed re-enqueues queued sends whose task was lost, and fails
// sends whose outcome stayed unknown: they are not repeated, because the
// provider may have delivered them. The two statements use the partial
// indexes messages_queued and messages_unconfirmed, so they read only the
// pending sends, not every tenant's messages.
func (s *Service) SweepUnconfirmed(ctx context.Context) (requeued, failed int64, err error) {
	var lost []models.Message
	err = s.db.WithContext(ctx).Select("id", "organization_id").
		Where("status = 'pending' AND direction = 'outgoing' AND send_started_at IS NULL AND created_at < ?", s.now().Add(-time.Minute)).
		Limit(1000).Find(&lost).Error
	if err != nil {
		return 0, 0, err
	}
	for _, m := range lost {
		_, err := s.enq.Enqueue(ctx, jobs.MessageSend{OrganizationID: m.OrganizationID, MessageID: m.ID})
		switch {
		case err == nil:
			requeued++
		case !errors.Is(err, jobs.ErrDuplicate): // a duplicate is a task still queued: nothing was lost
			s.log.Warn("cannot re-enqueue a queued send; the next sweep retries", "message_id", m.ID, "error", err)
		}
	}
	res := s.db.WithContext(ctx).Model(&models.Message{}).
		Where("status = 'pending' AND send_started_at < ? AND platform_message_id IS NULL", s.now().Add(-unconfirmedAfter)).
		Updates(map[string]any{"status": models.StatusFailed, "failed_at": s.now(), "updated_at": s.now(),
			"error_title":  "send outcome unknown",
			"error_detail": "the answer of the provider was lost and no status arrived; the message was not resent to avoid a duplicate"})
	return requeued, res.RowsAffected, res.Error
}

func deref(p *uuid.UUID) uuid.UUID {
	if p == nil {
		return uuid.Nil
	}
	return *p
}

func unixTime(s string, fallback time.Time) time.Time {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return time.Unix(n, 0).UTC()
	}
	return fallback
}
