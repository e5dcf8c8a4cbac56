package messagesapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/messaging"
	"wharf/models"
)

type listQuery struct {
	web.PageQuery
	Before string `query:"before" description:"A message id (UUID): the messages just before it."`
	After  string `query:"after" description:"A message id (UUID): the messages just after it; not with before."`
}

type messageError struct {
	Code   *int   `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

type messageResp struct {
	ID                uuid.UUID      `json:"id"`
	PlatformMessageID *string        `json:"platform_message_id"`
	ContactID         uuid.UUID      `json:"contact_id"`
	AccountID         *uuid.UUID     `json:"account_id"`
	Direction         string         `json:"direction"`
	Type              string         `json:"type"`
	Content           map[string]any `json:"content"`
	Status            string         `json:"status"`
	TemplateName      string         `json:"template_name,omitempty"`
	Error             *messageError  `json:"error,omitempty"` // failed messages only
	Timestamp         time.Time      `json:"timestamp"`
	SentAt            *time.Time     `json:"sent_at"`
	DeliveredAt       *time.Time     `json:"delivered_at"`
	ReadAt            *time.Time     `json:"read_at"`
	CreatedAt         time.Time      `json:"created_at"`
}

func toMessageResp(m models.Message) messageResp {
	r := messageResp{ID: m.ID, PlatformMessageID: m.PlatformMessageID, ContactID: m.ContactID, AccountID: m.AccountID,
		Direction: m.Direction, Type: m.Type, Content: m.Content.V, Status: string(m.Status), TemplateName: m.TemplateName,
		Timestamp: web.UTC(m.OccurredAt), SentAt: web.UTCPtr(m.SentAt), DeliveredAt: web.UTCPtr(m.DeliveredAt), ReadAt: web.UTCPtr(m.ReadAt),
		CreatedAt: web.UTC(m.CreatedAt)}
	if r.Content == nil {
		r.Content = map[string]any{}
	}
	if m.Status == models.StatusFailed {
		r.Error = &messageError{Code: m.ErrorCode, Title: m.ErrorTitle, Detail: m.ErrorDetail}
	}
	return r
}

type sendRequest struct {
	Type        string              `json:"type"` // text or interactive
	Text        string              `json:"text"`
	Interactive *interactiveRequest `json:"interactive"`
}

type interactiveRequest struct {
	Type       string             `json:"type"` // button or cta_url
	Body       string             `json:"body"`
	Buttons    []messaging.Button `json:"buttons"`
	ButtonText string             `json:"button_text"`
	URL        string             `json:"url"`
}

type mediaRequest struct {
	ContactID string `json:"contact_id"`
	Type      string `json:"type"`
	MediaURL  string `json:"media_url"`
	Caption   string `json:"caption"`
}

type sentResp struct {
	ID                uuid.UUID            `json:"id"`
	PlatformMessageID string               `json:"platform_message_id"`
	Status            models.MessageStatus `json:"status"`
}

// templateRequest is a template send; template_params values may be
// strings or numbers.
type templateRequest struct {
	ContactID      *string        `json:"contact_id"`
	PhoneNumber    string         `json:"phone_number"`
	TemplateName   string         `json:"template_name"`
	TemplateID     *string        `json:"template_id"`
	TemplateParams map[string]any `json:"template_params"`
	AccountName    string         `json:"account_name"`
}

type queuedResp struct {
	MessageID    uuid.UUID `json:"message_id"`
	PhoneNumber  string    `json:"phone_number"` // masked when the organization wants it
	Status       string    `json:"status"`
	TemplateName string    `json:"template_name"`
}
