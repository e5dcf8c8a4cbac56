package wharfapp

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// AccountFor answers the core account a Platform Account mirrors (404 when
// the organization has no such Platform Account).
func (s *Service) AccountFor(ctx context.Context, orgID uuid.UUID, platformAccountName string) (uuid.UUID, error) {
	if _, err := s.frame.GetDoc(ctx, nil, orgID, DoctypeAccount, platformAccountName); err != nil {
		return uuid.Nil, err
	}
	return s.core(ctx, nil, orgID, platformAccountName)
}

// TemplateFor answers the core template a Platform Template names (by its
// template_name on its account, or on the default outgoing account): id,
// provider name and language. The template must be sendable (APPROVED).
func (s *Service) TemplateFor(ctx context.Context, orgID uuid.UUID, platformTemplateName string) (id uuid.UUID, name, language string, err error) {
	doc, err := s.frame.GetDoc(ctx, nil, orgID, DoctypeTemplate, platformTemplateName)
	if err != nil {
		return uuid.Nil, "", "", err
	}
	account := str(doc.Get("platform_account"))
	if account == "" {
		names, err := s.frame.NamesBy(ctx, nil, orgID, DoctypeAccount, "is_default_outgoing", []string{"1"})
		if err != nil {
			return uuid.Nil, "", "", err
		}
		account = names["1"]
	}
	accountID, err := s.core(ctx, nil, orgID, account)
	if err != nil {
		return uuid.Nil, "", "", err
	}
	t, err := s.Templates.Sendable(ctx, orgID, &accountID, nil, str(doc.Get("template_name")))
	if err != nil {
		return uuid.Nil, "", "", err
	}
	return t.ID, t.Name, t.Language, nil
}

// SendTemplate is a template send by the integration's other packages.
type SendTemplate struct {
	Account          string // a Platform Account's name; "" is the default outgoing account
	To               string
	Template         string   // a Platform Template's name
	Parameters       []string // positional: {{1}}, {{2}}, ...
	ReferenceDoctype string
	ReferenceName    string
	BulkMessage      string
}

// SendTemplate creates the Outgoing Platform Message of a template send
// and queues it (the worker sends it; its status follows the provider's
// webhooks). It answers the document's name.
func (s *Service) SendTemplate(ctx context.Context, orgID uuid.UUID, in SendTemplate) (string, error) {
	if err := s.Ensure(ctx, orgID); err != nil {
		return "", err
	}
	params := make([]any, len(in.Parameters))
	for i, p := range in.Parameters {
		params[i] = p
	}
	doc := map[string]any{"type": "Outgoing", "to": in.To, "template": in.Template, "template_parameters": params}
	for k, v := range map[string]string{"platform_account": in.Account, "reference_doctype": in.ReferenceDoctype,
		"reference_name": in.ReferenceName, "bulk_message": in.BulkMessage} {
		if v != "" {
			doc[k] = v
		}
	}
	d, err := s.frame.InsertDoc(ctx, orgID, By, DoctypeMessage, doc)
	if err != nil {
		return "", fmt.Errorf("wharfapp: template send to %s: %w", in.To, err)
	}
	return d.Name, nil
}
