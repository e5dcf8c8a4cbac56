package wharfapp

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"wharf/internal/docframe"
	"wharf/internal/inbound"
	"wharf/internal/statuses"
)

// ApplyStatuses is the integration's inbound.StatusConsumer. It mirrors:
// every outcome of the batch (b.All) whose message is a Platform Message
// (by core_message_id, the send's callback data, else by message_id) moves
// that document's status forward and records the provider's message id,
// in the batch's transaction; the others are skipped. It passes the
// outcomes it was given on unchanged.
func (s *Service) ApplyStatuses(ctx context.Context, tx *gorm.DB, b inbound.StatusBatch) (inbound.StatusResult, error) {
	res := inbound.StatusResult{Unmatched: b.Outcomes}
	var callbacks, ids []string
	for _, o := range b.All {
		if o.Callback != "" {
			callbacks = append(callbacks, o.Callback)
		}
		ids = append(ids, o.PlatformID)
	}
	byCore, err := s.frame.NamesBy(ctx, tx, b.OrganizationID, DoctypeMessage, "core_message_id", callbacks)
	if err != nil {
		return res, err
	}
	byID, err := s.frame.NamesBy(ctx, tx, b.OrganizationID, DoctypeMessage, "message_id", ids)
	if err != nil {
		return res, err
	}
	var publish []func(context.Context)
	for _, o := range b.All {
		name := byCore[o.Callback]
		if name == "" {
			name = byID[o.PlatformID]
		}
		if name == "" {
			continue
		}
		fn, err := s.applyOutcome(ctx, tx, b, name, o)
		if err != nil {
			return res, err
		}
		if fn != nil {
			publish = append(publish, fn)
		}
	}
	if len(publish) > 0 {
		res.AfterCommit = func(ctx context.Context) {
			for _, fn := range publish {
				fn(ctx)
			}
		}
	}
	return res, nil
}

func (s *Service) applyOutcome(ctx context.Context, tx *gorm.DB, b inbound.StatusBatch, name string, o *statuses.Outcome) (func(context.Context), error) {
	// Locked, as the projector locks it (projection.go): a status and the
	// projection of the send's acceptance computed from the same old state
	// would both move the document to sent, a change saved twice.
	doc, err := s.frame.LockDoc(ctx, tx, b.OrganizationID, DoctypeMessage, name)
	if err != nil {
		return nil, err
	}
	change := map[string]any{}
	if str(doc.Get("message_id")) == "" {
		change["message_id"] = o.PlatformID
	}
	if final := string(o.Final); forward(str(doc.Get("status")), final) {
		change["status"] = final
		if final == StatusFailed {
			change["error"] = o.ErrorTitle
			if o.ErrorDetail != "" {
				change["error"] = o.ErrorTitle + ": " + o.ErrorDetail
			}
		}
	}
	if len(change) == 0 {
		return nil, nil
	}
	_, publish, err := s.frame.UpdateDocIn(ctx, tx, b.OrganizationID, By, DoctypeMessage, name, change)
	return publish, err
}

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
