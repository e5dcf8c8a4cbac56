package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/messaging"
	"wharf/models"
)

var errTagsRequired = apperr.Invalidf("tags is required: an array of tag names")

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
	Error             *messageError  `json:"error,omitempty"`
	Timestamp         time.Time      `json:"timestamp"`
	SentAt            *time.Time     `json:"sent_at"`
	DeliveredAt       *time.Time     `json:"delivered_at"`
	ReadAt            *time.Time     `json:"read_at"`
	CreatedAt         time.Time      `json:"created_at"`
}

func toMessageResp(m models.Message) messageResp {
	r := messageResp{ID: m.ID, PlatformMessageID: m.PlatformMessageID, ContactID: m.ContactID, AccountID: m.AccountID,
		Direction: m.Direction, Type: m.Type, Content: m.Content.V, Status: m.Status, TemplateName: m.TemplateName,
		Timestamp: utc(m.OccurredAt), SentAt: utcPtr(m.SentAt), DeliveredAt: utcPtr(m.DeliveredAt), ReadAt: utcPtr(m.ReadAt),
		CreatedAt: utc(m.CreatedAt)}
	if r.Content == nil {
		r.Content = map[string]any{}
	}
	if m.Status == models.StatusFailed {
		r.Error = &messageError{Code: m.ErrorCode, Title: m.ErrorTitle, Detail: m.ErrorDetail}
	}
	return r
}

func (s *Server) listMessages(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	pg, valid := s.page(c, 50, 100)
	if !valid {
		return
	}
	var cursors [2]*uuid.UUID
	for i, name := range []string{"before", "after"} {
		if cursors[i], valid = s.queryUUID(c, name); !valid {
			return
		}
	}
	if cursors[0] != nil && cursors[1] != nil {
		s.fail(c, apperr.Invalidf("use before or after, not both"))
		return
	}
	rows, total, err := s.Messaging.List(c.Request.Context(), principal(c).OrgID, id, pg, cursors[0], cursors[1])
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]messageResp, len(rows))
	for i, m := range rows {
		items[i] = toMessageResp(m)
	}
	ok(c, http.StatusOK, gin.H{"items": items, "total": total, "page": pg.Page, "limit": pg.Limit})
}

func actor(c *gin.Context) messaging.Actor {
	p := principal(c)
	return messaging.Actor{UserID: p.UserID, APIKeyID: p.APIKeyID}
}

func (s *Server) sendMessage(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Interactive *struct {
			Type       string             `json:"type"`
			Body       string             `json:"body"`
			Buttons    []messaging.Button `json:"buttons"`
			ButtonText string             `json:"button_text"`
			URL        string             `json:"url"`
		} `json:"interactive"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	ctx, org := c.Request.Context(), principal(c).OrgID
	var sent *messaging.Sent
	var err error
	switch req.Type {
	case "text":
		sent, err = s.Messaging.SendText(ctx, org, actor(c), id, req.Text)
	case "interactive":
		if req.Interactive == nil {
			err = apperr.Invalidf("interactive is required for type interactive")
			break
		}
		in := req.Interactive
		sent, err = s.Messaging.SendInteractive(ctx, org, actor(c), id, messaging.Interactive{Type: in.Type, Body: in.Body,
			Buttons: in.Buttons, ButtonText: in.ButtonText, URL: in.URL})
	default:
		err = apperr.Invalidf("type must be text or interactive (media: POST /api/messages/media; templates: POST /api/messages/template)")
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, gin.H{"id": sent.ID, "platform_message_id": sent.PlatformMessageID, "status": sent.Status})
}

func (s *Server) sendMedia(c *gin.Context) {
	var req struct {
		ContactID string `json:"contact_id"`
		Type      string `json:"type"`
		MediaURL  string `json:"media_url"`
		Caption   string `json:"caption"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	contactID, err := uuid.Parse(req.ContactID)
	if err != nil {
		s.fail(c, apperr.Invalidf("contact_id must be a UUID"))
		return
	}
	sent, err := s.Messaging.SendMedia(c.Request.Context(), principal(c).OrgID, actor(c),
		messaging.MediaInput{ContactID: contactID, Type: req.Type, URL: req.MediaURL, Caption: req.Caption})
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, gin.H{"id": sent.ID, "platform_message_id": sent.PlatformMessageID, "status": sent.Status})
}

func (s *Server) sendTemplate(c *gin.Context) {
	var req struct {
		ContactID      *string        `json:"contact_id"`
		PhoneNumber    string         `json:"phone_number"`
		TemplateName   string         `json:"template_name"`
		TemplateID     *string        `json:"template_id"`
		TemplateParams map[string]any `json:"template_params"`
		AccountName    string         `json:"account_name"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	contactID, err1 := optionalUUID("contact_id", req.ContactID)
	templateID, err2 := optionalUUID("template_id", req.TemplateID)
	for _, err := range []error{err1, err2} {
		if err != nil {
			s.fail(c, err)
			return
		}
	}
	params, err := stringParams(req.TemplateParams)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx, org := c.Request.Context(), principal(c).OrgID
	q, err := s.Messaging.QueueTemplate(ctx, org, actor(c), messaging.TemplateInput{ContactID: contactID, PhoneNumber: req.PhoneNumber,
		TemplateName: req.TemplateName, TemplateID: templateID, Params: params, AccountName: req.AccountName})
	if err != nil {
		s.fail(c, err)
		return
	}
	m, err := s.masker(ctx, org)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusAccepted, gin.H{"message_id": q.MessageID, "phone_number": m.phone(q.PhoneNumber), "status": q.Status,
		"template_name": q.TemplateName})
}

// stringParams accepts template_params values as strings or numbers.
func stringParams(in map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case string:
			out[k] = x
		case float64, bool:
			b, _ := json.Marshal(x) // cannot fail for these types; keeps 12 as "12", not "12.000000"
			out[k] = string(b)
		case nil:
		default:
			return nil, apperr.Invalidf("template_params.%s must be a string", k)
		}
	}
	return out, nil
}

func (s *Server) markRead(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.Messaging.MarkRead(c.Request.Context(), principal(c).OrgID, id); err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, nil)
}
