package wharfapp

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"wharf/internal/docframe"
	"wharf/internal/inbound"
	"wharf/internal/statuses"
)

// ApplyStatuses is the integration's inbound.StatusConsumer, which now
// serves only the Platform Messages that no projection owns: those without
// a core_message_id (an Outgoing Platform Message sent through the core,
// projection.go) and without a core_recipient_id (a projected bulk
// message's send, internal/wharfbulk), that is the sends of bulk messages
// recorded before their campaigns were projected (migration 00034). Every
// outcome of the batch (b.All) whose provider id is such a document's
// message_id moves that document's status forward, in the batch's
// transaction. It passes the outcomes it was given on unchanged.
//
// Once no such document waits for statuses any more, ApplyStatuses and
// applyOutcome go (the Service stays an inbound.MessageConsumer for
// incoming messages, ConsumeMessage).
func (s *Service) ApplyStatuses(ctx context.Context, tx *gorm.DB, b inbound.StatusBatch) (inbound.StatusResult, error) {
	res := inbound.StatusResult{Unmatched: b.Outcomes}
	ids := make([]string, len(b.All))
	for i, o := range b.All {
		ids[i] = o.PlatformID
	}
	found, err := s.frame.Find(ctx, tx, docframe.Filter{OrganizationID: b.OrganizationID, Doctype: DoctypeMessage,
		Equal: map[string][]string{"message_id": ids}, Blank: []string{"core_message_id", "core_recipient_id"}, Values: []string{"message_id"}})
	if err != nil || len(found) == 0 {
		return res, err
	}
	byID := make(map[string]string, len(found))
	for _, d := range found {
		byID[d.Values[0]] = d.Name
	}
	var publish []func(context.Context)
	for _, o := range b.All {
		name := byID[o.PlatformID]
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
	// Locked: the forward check and the write see the same status.
	doc, err := s.frame.LockDoc(ctx, tx, b.OrganizationID, DoctypeMessage, name)
	if err != nil {
		return nil, err
	}
	change := map[string]any{}
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
