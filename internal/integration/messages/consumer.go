package messages

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/integration/docframe"
)

// ConsumeMessage is the integration's inbound.MessageConsumer: an incoming
// message to an account that a Platform Account mirrors becomes an
// Incoming Platform Message (message_type received), inserted through the
// framework in the message's transaction so that after_insert hooks run
// exactly once with it; After Insert is published after the commit.
// Messages of accounts the integration does not mirror are not copied.
func (s *Service) ConsumeMessage(ctx context.Context, tx *gorm.DB, in *inbound.Incoming) (inbound.MessageResult, error) {
	orgID := in.Account.OrganizationID
	names, err := s.frame.NamesBy(ctx, tx, orgID, DoctypeAccount, "account_name", []string{in.Account.Name})
	if err != nil || names[in.Account.Name] == "" {
		return inbound.MessageResult{}, err
	}
	m := in.Message
	doc := map[string]any{"type": "Incoming", "from_number": "+" + m.From, "message_type": "received", "message_id": m.ID,
		"platform_account": names[in.Account.Name], "content_type": "unknown"}
	switch {
	case m.Text != nil:
		doc["content_type"], doc["message"] = "text", m.Text.Body
	case m.Button != nil: // a template's quick reply
		doc["content_type"], doc["message"], doc["button_text"] = "button", m.Button.Payload, m.Button.Text
	case m.Interactive != nil && m.Interactive.ButtonReply != nil:
		doc["content_type"], doc["message"], doc["button_text"] = "button", m.Interactive.ButtonReply.ID, m.Interactive.ButtonReply.Title
	case m.Interactive != nil && m.Interactive.ListReply != nil:
		doc["content_type"], doc["message"], doc["button_text"] = "button", m.Interactive.ListReply.ID, m.Interactive.ListReply.Title
	case m.Interactive != nil && m.Interactive.NFMReply != nil:
		doc["content_type"], doc["message"] = "flow", m.Interactive.NFMReply.ResponseJSON
	default:
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(m.Raw, &raw)
		switch m.Type {
		case "image", "video", "audio", "document", "sticker":
			var media struct {
				ID, Caption, Filename string
				MimeType              string `json:"mime_type"`
			}
			_ = json.Unmarshal(raw[m.Type], &media)
			doc["content_type"], doc["media_id"], doc["mime_type"], doc["message"] = m.Type, media.ID, media.MimeType, media.Caption
		case "location", "contacts", "reaction":
			doc["content_type"], doc["message"] = m.Type, string(raw[m.Type])
		}
	}
	_, publish, err := s.frame.InsertDocIn(ctx, tx, orgID, By, DoctypeMessage, doc)
	if err != nil {
		return inbound.MessageResult{}, err
	}
	return inbound.MessageResult{AfterCommit: publish}, nil
}

var _ docframe.EventSink = (*Service)(nil)
