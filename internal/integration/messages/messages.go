package messages

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/infra/statuses"
	"wharf/internal/integration/docframe"
	"wharf/internal/messaging"
)

// messageHook sends Outgoing Platform Messages through the core: before
// the insert, in the document's transaction, it stores the core message
// pending (messaging.QueueReply for text, buttons, lists and flows,
// QueueTemplateIn for templates) and records its id in core_message_id;
// the message:send job is enqueued once the document committed
// (DocumentEvent), and the core's exactly-once rules do the rest. A
// refused message stores nothing.
type messageHook struct{ s *Service }

func (messageHook) Doctypes() []string { return []string{DoctypeMessage} }

func (h messageHook) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, doc *docframe.Doc) error {
	if ev != docframe.BeforeInsert || str(doc.Get("type")) == "Incoming" {
		return nil
	}
	if doc.Projection {
		// A send made elsewhere (a bulk message's campaign): the document
		// projects it (docframe.InsertProjectionIn), it is not sent.
		return nil
	}
	return h.s.queue(ctx, tx, doc)
}

// button is one of a message's buttons (the buttons field's JSON).
type button struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	ID    string `json:"id"`
}

func (s *Service) queue(ctx context.Context, tx *gorm.DB, doc *docframe.Doc) error {
	orgID := doc.OrganizationID
	number, err := phone.Normalize(str(doc.Get("to")))
	if err != nil {
		return docframe.Validationf("to: %v", err)
	}
	accountName := str(doc.Get("platform_account"))
	if accountName == "" {
		names, err := s.frame.NamesBy(ctx, tx, orgID, DoctypeAccount, "is_default_outgoing", []string{"1"})
		if err != nil {
			return err
		}
		if accountName = names["1"]; accountName == "" {
			return docframe.Validationf("platform_account is required: no Platform Account is the default outgoing one")
		}
		doc.Set("platform_account", accountName)
	}
	accountID, err := s.core(ctx, tx, orgID, accountName)
	if err != nil {
		return docframe.Validationf("Platform Account %s: %v", accountName, err)
	}
	contact, created, err := s.Contacts.Upsert(ctx, tx, orgID, number, &accountID, "", "framework")
	if err != nil {
		return err
	}
	// A new contact's contact.created event commits with the document;
	// the webhooks sweeper dispatches it (SweepUndispatched).
	_ = created
	text := str(doc.Get("message"))
	var id uuid.UUID
	switch {
	case str(doc.Get("template")) != "":
		tmplDoc, err := s.frame.GetDoc(ctx, tx, orgID, DoctypeTemplate, str(doc.Get("template")))
		if err != nil {
			return err
		}
		tmpl, err := s.Templates.Sendable(ctx, orgID, &accountID, nil, str(tmplDoc.Get("template_name")))
		if err != nil {
			return err
		}
		values, err := parameters(doc.Get("template_parameters"))
		if err != nil {
			return err
		}
		if id, err = s.Messaging.QueueTemplateIn(ctx, tx, orgID, contact.ID, accountID, tmpl, values); err != nil {
			return err
		}
		doc.Set("content_type", "template")
		doc.Set("message_type", "Template")
	case str(doc.Get("flow")) != "":
		flowDoc, err := s.frame.GetDoc(ctx, tx, orgID, DoctypeFlow, str(doc.Get("flow")))
		if err != nil {
			return err
		}
		flowID := str(flowDoc.Get("flow_id"))
		if flowID == "" {
			return docframe.Validationf("Platform Flow %s has no flow_id: it is not at the provider", flowDoc.Name)
		}
		cta := str(doc.Get("flow_cta"))
		if cta == "" {
			cta = "Open"
		}
		if text == "" {
			return docframe.Validationf("message is required (the flow message's body)")
		}
		if id, err = s.Messaging.QueueReply(ctx, tx, orgID, contact.ID, accountID, messaging.Reply{Text: text,
			Flow: &messaging.FlowReply{FlowID: flowID, CTA: cta, Token: doc.Name}}); err != nil {
			return err
		}
		doc.Set("content_type", "flow")
	default:
		bs, err := buttons(doc.Get("buttons"))
		if err != nil {
			return err
		}
		if text == "" {
			return docframe.Validationf("message is required (or a template)")
		}
		r := messaging.Reply{Text: text}
		for _, b := range bs {
			r.Buttons = append(r.Buttons, messaging.Button{ID: b.ID, Title: b.Title})
		}
		if len(bs) > messaging.MaxButtons {
			r.ListButton = "Choose"
		}
		if id, err = s.Messaging.QueueReply(ctx, tx, orgID, contact.ID, accountID, r); err != nil {
			return err
		}
		if len(bs) > 0 {
			doc.Set("content_type", "interactive")
		} else {
			doc.Set("content_type", "text")
		}
	}
	// The document projects the core message from now on: its changes
	// reach the document through the events outbox (projection.go).
	if err := s.Messaging.Project(ctx, tx, orgID, id); err != nil {
		return err
	}
	doc.Set("to", number)
	doc.Set("status", StatusQueued)
	doc.Set("core_message_id", id.String())
	return nil
}

// parameters reads template_parameters: a JSON list (positional, "1",
// "2", ...) or an object of parameter names to values.
func parameters(v any) (map[string]string, error) {
	out := map[string]string{}
	switch p := v.(type) {
	case nil:
	case []any:
		for i, x := range p {
			out[strconv.Itoa(i+1)] = fmt.Sprint(x)
		}
	case map[string]any:
		for k, x := range p {
			out[k] = fmt.Sprint(x)
		}
	case string:
		if strings.TrimSpace(p) == "" {
			return out, nil
		}
		var x any
		if err := json.Unmarshal([]byte(p), &x); err != nil {
			return nil, docframe.Validationf("template_parameters must be a JSON list or object")
		}
		return parameters(x)
	default:
		return nil, docframe.Validationf("template_parameters must be a JSON list or object")
	}
	return out, nil
}

// buttons reads the buttons field: a JSON list of {type, title, id}; an id
// defaults to the title. More than 10 is refused (a list holds 10 rows).
func buttons(v any) ([]button, error) {
	if v == nil {
		return nil, nil
	}
	b, _ := json.Marshal(v)
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		b = []byte(s)
	}
	var out []button
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, docframe.Validationf("buttons must be a JSON list of {type, title, id}")
	}
	if len(out) > 10 {
		return nil, docframe.Validationf("at most 10 buttons (more than 3 are sent as a list)")
	}
	for i := range out {
		if strings.TrimSpace(out[i].Title) == "" {
			return nil, docframe.Validationf("buttons row %d: title is required", i+1)
		}
		if out[i].ID == "" {
			out[i].ID = out[i].Title
		}
	}
	return out, nil
}

// messageStages is the status order (internal/statuses) of Platform
// Messages: Queued (or no status yet) before the send.
var messageStages = statuses.Stages{BeforeSend: []string{StatusQueued, ""}}

// forward tells whether a Platform Message's status moves from from to to.
func forward(from, to string) bool { return messageStages.Forward(from, to) }

// notFound is get_message_status's refusal (404 DoesNotExistError).
func notFound(id string) error {
	return apperr.NotFoundf("Platform Message with message_id %s not found", id)
}
