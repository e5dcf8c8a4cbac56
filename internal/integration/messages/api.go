package messages

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/templates"
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
	// HeaderMediaURL is the media of a template whose header is an IMAGE,
	// VIDEO or DOCUMENT (a link the provider fetches); HeaderFilename the
	// name a document header shows (optional).
	HeaderMediaURL string
	HeaderFilename string
	// ButtonURLParam is the dynamic part of the template's URL button (the
	// first URL button whose url has a placeholder).
	ButtonURLParam string
}

// SendTemplate creates the Outgoing Platform Message of a template send
// and queues it (the worker sends it; its status follows the provider's
// webhooks). It answers the document's name. The header media and the
// button parameter go into template_parameters under the core's keys
// (templates.HeaderMediaKey, "button_<i>"), as a client of the core's
// template send would give them; values the template has no slot for are
// stored and not sent.
func (s *Service) SendTemplate(ctx context.Context, orgID uuid.UUID, in SendTemplate) (string, error) {
	if err := s.Ensure(ctx, orgID); err != nil {
		return "", err
	}
	params := make(map[string]any, len(in.Parameters)+3)
	for i, p := range in.Parameters {
		params[strconv.Itoa(i+1)] = p
	}
	if in.HeaderMediaURL != "" {
		params[templates.HeaderMediaKey] = in.HeaderMediaURL
		if in.HeaderFilename != "" {
			params[templates.HeaderFilenameKey] = in.HeaderFilename
		}
	}
	if in.ButtonURLParam != "" {
		key, err := s.urlButtonKey(ctx, orgID, in.Template)
		if err != nil {
			return "", fmt.Errorf("wharfapp: template send to %s: %w", in.To, err)
		}
		if key != "" {
			params[key] = in.ButtonURLParam
		}
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

// urlButtonKey answers the core's parameter key of a Platform Template's
// first URL button with a placeholder ("button_<i>", i its position among
// the buttons, as the provider counts them), or "" when it has none. The
// document's rows are the template's buttons in order: definition() and
// sync_templates keep them so.
func (s *Service) urlButtonKey(ctx context.Context, orgID uuid.UUID, platformTemplate string) (string, error) {
	doc, err := s.frame.GetDoc(ctx, nil, orgID, DoctypeTemplate, platformTemplate)
	if err != nil {
		return "", err
	}
	rows, _ := doc.Get("buttons").([]map[string]any)
	for i, r := range rows {
		if str(r["button_type"]) == "URL" && strings.Contains(str(r["url"]), "{{") {
			return "button_" + strconv.Itoa(i), nil
		}
	}
	return "", nil
}

// TemplateOn answers the core template a Platform Template names, sendable
// from the core account accountID (bulk's Resolver: a bulk message's
// template is a Link to a Platform Template, its account resolved apart).
func (s *Service) TemplateOn(ctx context.Context, orgID, accountID uuid.UUID, platformTemplate string) (uuid.UUID, error) {
	doc, err := s.frame.GetDoc(ctx, nil, orgID, DoctypeTemplate, platformTemplate)
	if err != nil {
		return uuid.Nil, err
	}
	t, err := s.Templates.Sendable(ctx, orgID, &accountID, nil, str(doc.Get("template_name")))
	if err != nil {
		return uuid.Nil, err
	}
	return t.ID, nil
}
