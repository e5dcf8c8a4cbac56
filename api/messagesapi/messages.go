package messagesapi

import (
	"encoding/json"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
)

func (h *Handlers) list(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	pg, valid := web.Paging(c, 50, 100)
	if !valid {
		return
	}
	var cursors [2]*uuid.UUID
	for i, name := range []string{"before", "after"} {
		if cursors[i], valid = web.QueryUUID(c, name); !valid {
			return
		}
	}
	if cursors[0] != nil && cursors[1] != nil {
		web.Fail(c, apperr.Invalidf("use before or after, not both"))
		return
	}
	if !h.visibleContact(c, id) {
		return
	}
	rows, total, err := h.messaging.List(c.Request.Context(), web.Principal(c).OrgID, id, pg, cursors[0], cursors[1])
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]messageResp, len(rows))
	for i, m := range rows {
		items[i] = toMessageResp(m)
	}
	web.OK(c, web.NewPage(items, total, pg))
}

// actor is who sends: the user, and the API key when one was used.
func actor(c *gin.Context) messaging.Actor {
	p := web.Principal(c)
	return messaging.Actor{UserID: p.UserID, APIKeyID: p.APIKeyID}
}

func (h *Handlers) send(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req sendRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if !h.visibleContact(c, id) {
		return
	}
	ctx, org := c.Request.Context(), web.Principal(c).OrgID
	var sent *messaging.Sent
	var err error
	switch req.Type {
	case "text":
		sent, err = h.messaging.SendText(ctx, org, actor(c), id, req.Text)
	case "interactive":
		if req.Interactive == nil {
			err = apperr.Invalidf("interactive is required for type interactive")
			break
		}
		in := req.Interactive
		sent, err = h.messaging.SendInteractive(ctx, org, actor(c), id, messaging.Interactive{Type: in.Type, Body: in.Body,
			Buttons: in.Buttons, ButtonText: in.ButtonText, URL: in.URL})
	case "image", "video", "audio", "document", "sticker":
		sent, err = h.sendUploaded(c, id, req)
	default:
		err = apperr.Invalidf("type must be text, interactive, image, video, audio, document or sticker (media by link: POST /api/messages/media; templates: POST /api/messages/template)")
	}
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, sentResp(*sent))
}

func (h *Handlers) sendMedia(c *gin.Context) {
	var req mediaRequest
	if !web.BindJSON(c, &req) {
		return
	}
	contactID, err := uuid.Parse(req.ContactID)
	if err != nil {
		web.Fail(c, apperr.Invalidf("contact_id must be a UUID"))
		return
	}
	sent, err := h.messaging.SendMedia(c.Request.Context(), web.Principal(c).OrgID, actor(c),
		messaging.MediaInput{ContactID: contactID, Type: req.Type, URL: req.MediaURL, Caption: req.Caption})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, sentResp(*sent))
}

func (h *Handlers) sendTemplate(c *gin.Context) {
	var req templateRequest
	if !web.BindJSON(c, &req) {
		return
	}
	contactID, err1 := web.OptionalUUID("contact_id", req.ContactID)
	templateID, err2 := web.OptionalUUID("template_id", req.TemplateID)
	for _, err := range []error{err1, err2} {
		if err != nil {
			web.Fail(c, err)
			return
		}
	}
	params, err := stringParams(req.TemplateParams)
	if err != nil {
		web.Fail(c, err)
		return
	}
	ctx, org := c.Request.Context(), web.Principal(c).OrgID
	q, err := h.messaging.QueueTemplate(ctx, org, actor(c), messaging.TemplateInput{ContactID: contactID, PhoneNumber: req.PhoneNumber,
		TemplateName: req.TemplateName, TemplateID: templateID, Params: params, AccountName: req.AccountName})
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, err := h.maskers.Masker(ctx, org)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Accepted(c, queuedResp{MessageID: q.MessageID, PhoneNumber: m.Phone(q.PhoneNumber), Status: string(q.Status), TemplateName: q.TemplateName})
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

func (h *Handlers) markRead(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if !h.visibleMessage(c, id) {
		return
	}
	if err := h.messaging.MarkRead(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, nil)
}

// markConversationRead is PUT /api/contacts/{id}/read.
func (h *Handlers) markConversationRead(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid || !h.visibleContact(c, id) {
		return
	}
	r, err := h.messaging.MarkConversationRead(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, conversationReadResp(*r))
}

// messageNotFound turns a hidden contact's 404 into the message's.
func messageNotFound(err error) error {
	if apperr.Is(err, apperr.NotFound) {
		return apperr.NotFoundf("message not found")
	}
	return err
}

// sendUploaded sends a file uploaded with POST /api/media; the request's
// type must be the upload's.
func (h *Handlers) sendUploaded(c *gin.Context, contactID uuid.UUID, req sendRequest) (*messaging.Sent, error) {
	if req.Media == nil || req.Media.ID == "" {
		return nil, apperr.Invalidf("media.id is required for type %s (upload the file with POST /api/media)", req.Type)
	}
	mediaID, err := uuid.Parse(req.Media.ID)
	if err != nil {
		return nil, apperr.Invalidf("media.id must be a UUID")
	}
	return h.messaging.SendUploaded(c.Request.Context(), web.Principal(c).OrgID, actor(c), messaging.UploadedInput{
		ContactID: contactID, MediaID: mediaID, Kind: req.Type, Caption: req.Media.Caption, Filename: req.Media.Filename})
}
