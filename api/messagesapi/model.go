package messagesapi

import (
	"mime/multipart"
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
	// Media is the message's stored media; absent for messages without.
	Media *mediaResp `json:"media,omitempty"`
}

// mediaResp tells whether a message's media can be read, and where.
type mediaResp struct {
	Status   string `json:"status" enum:"pending,stored,unavailable" description:"pending: being fetched from the provider; stored: served at url; unavailable: the fetch gave up (too large, wrong type, the provider failing)"`
	URL      string `json:"url,omitempty" description:"Path of GET /api/messages/{id}/media, when stored."`
	MimeType string `json:"mime_type,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Filename string `json:"filename,omitempty"`
	Error    string `json:"error,omitempty" description:"Why the media is unavailable."`
}

func toMessageResp(m models.Message) messageResp {
	r := messageResp{ID: m.ID, PlatformMessageID: m.PlatformMessageID, ContactID: m.ContactID, AccountID: m.AccountID,
		Direction: m.Direction, Type: m.Type, Content: m.Content.V, Status: string(m.Status), TemplateName: m.TemplateName,
		Timestamp: web.UTC(m.OccurredAt), SentAt: web.UTCPtr(m.SentAt), DeliveredAt: web.UTCPtr(m.DeliveredAt), ReadAt: web.UTCPtr(m.ReadAt),
		CreatedAt: web.UTC(m.CreatedAt)}
	if r.Content == nil {
		r.Content = map[string]any{}
	}
	if m.MediaStatus != nil {
		r.Media = &mediaResp{Status: *m.MediaStatus, Error: m.MediaError}
		if *m.MediaStatus == models.MediaStored {
			r.Media.URL, r.Media.MimeType, r.Media.Size, r.Media.Filename = mediaPath(m.ID), m.MediaMimeType, m.MediaSize, m.MediaFilename
		}
	}
	if m.Status == models.StatusFailed {
		r.Error = &messageError{Code: m.ErrorCode, Title: m.ErrorTitle, Detail: m.ErrorDetail}
	}
	return r
}

type sendRequest struct {
	Type        string              `json:"type"` // text, interactive, or image, video, audio, document, sticker (media)
	Text        string              `json:"text"`
	Interactive *interactiveRequest `json:"interactive"`
	Media       *sendMediaRequest   `json:"media"`
}

// sendMediaRequest names a file uploaded with POST /api/media.
type sendMediaRequest struct {
	ID       string `json:"id" description:"The id POST /api/media answered."`
	Caption  string `json:"caption" description:"Not for audio and stickers; at most 1024 characters."`
	Filename string `json:"filename" description:"Documents: the name the customer sees (default: the uploaded file's)."`
}

// uploadForm is the multipart body of POST /api/media.
type uploadForm struct {
	File *multipart.FileHeader `formData:"file" description:"The file. Its part's Content-Type is the declared type (else the sniffed one); the content must sniff as that type."`
	Type string                `formData:"type" description:"image, video, audio, document or sticker; default from the file's type."`
}

type uploadResp struct {
	ID        uuid.UUID `json:"id"`
	Type      string    `json:"type"`
	MimeType  string    `json:"mime_type"`
	Filename  string    `json:"filename"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
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

// conversationReadResp is the answer of PUT /api/contacts/{id}/read.
type conversationReadResp messaging.ConversationRead
