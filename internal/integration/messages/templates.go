package messages

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/integration/docframe"
	"wharf/internal/templates"
	"wharf/models"
	"wharf/platform"
)

// Platform Templates. A template inserted by a user (no template_id) is
// checked as the core would check it (417 before anything is stored),
// then submitted to the provider by the wharf:template_submit job, enqueued
// once the document committed; the job stores template_id and the status
// the provider gave (PENDING). The provider's review webhook, applied by
// the core templates consumer, is reflected into the document's status in
// the same transaction (TemplateEvents). Documents made by sync_templates
// carry their template_id and are not submitted. Changes to a submitted
// template's content are not sent to the provider.
type templateHook struct{ s *Service }

// templateName is the spec's rule: lowercase letters and underscores.
var templateName = regexp.MustCompile(`^[a-z_]+$`)

func (templateHook) Doctypes() []string { return []string{DoctypeTemplate} }

func (h templateHook) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, doc *docframe.Doc) error {
	if ev != docframe.Validate || str(doc.Get("template_id")) != "" {
		return nil
	}
	if name := str(doc.Get("template_name")); !templateName.MatchString(name) {
		return docframe.Validationf("template_name %q: lowercase letters and underscores only", name)
	}
	comps, format, samples := definition(doc)
	if err := templates.CheckDefinition(str(doc.Get("template_name")), str(doc.Get("language_code")), str(doc.Get("category")),
		comps, format, samples); err != nil {
		return err // apperr.Invalid: a 417 ValidationError
	}
	return nil
}

// definition builds the provider components of a Platform Template, with
// example values for its placeholders (the provider requires them).
func definition(doc *docframe.Doc) (comps []map[string]any, format string, samples []templates.SampleValue) {
	format = "positional"
	body := str(doc.Get("template"))
	addSamples := func(component, text string) {
		for _, p := range templates.Placeholders(text) {
			if i, err := strconv.Atoi(p); err == nil {
				samples = append(samples, templates.SampleValue{Component: component, Index: &i, Value: "example"})
			} else {
				format = "named"
				samples = append(samples, templates.SampleValue{Component: component, ParamName: p, Value: "example"})
			}
		}
	}
	switch ht := strings.ToUpper(str(doc.Get("header_type"))); ht {
	case "":
	case "TEXT":
		comps = append(comps, map[string]any{"type": "HEADER", "format": "TEXT", "text": str(doc.Get("header"))})
		addSamples("HEADER", str(doc.Get("header")))
	default:
		comps = append(comps, map[string]any{"type": "HEADER", "format": ht})
		samples = append(samples, templates.SampleValue{Component: "HEADER", Value: str(doc.Get("header"))})
	}
	comps = append(comps, map[string]any{"type": "BODY", "text": body})
	addSamples("BODY", body)
	if footer := str(doc.Get("footer")); footer != "" {
		comps = append(comps, map[string]any{"type": "FOOTER", "text": footer})
	}
	rows, _ := doc.Get("buttons").([]map[string]any)
	var buttons []any // as decoded JSON: the core validates components that way
	for i, r := range rows {
		b := map[string]any{"text": str(r["button_label"])}
		switch str(r["button_type"]) {
		case "URL":
			b["type"], b["url"] = "URL", str(r["url"])
			if strings.Contains(str(r["url"]), "{{") {
				n := i
				samples = append(samples, templates.SampleValue{Component: "BUTTONS", Index: &n, Value: "https://example.com/x"})
			}
		case "Call":
			b["type"], b["phone_number"] = "PHONE_NUMBER", str(r["phone_number"])
		default:
			b["type"] = "QUICK_REPLY"
		}
		buttons = append(buttons, b)
	}
	if len(buttons) > 0 {
		comps = append(comps, map[string]any{"type": "BUTTONS", "buttons": buttons})
	}
	return comps, format, samples
}

// SubmitTemplate is the wharf:template_submit job: it submits a Platform
// Template through the core templates domain and records template_id and
// status. A template the provider refuses is marked REJECTED with the
// reason in status; an account problem is retried.
func (s *Service) SubmitTemplate(ctx context.Context, orgID uuid.UUID, name string) error {
	doc, err := s.frame.GetDoc(ctx, nil, orgID, DoctypeTemplate, name)
	if apperr.Is(err, apperr.NotFound) {
		return nil // deleted before its submission
	}
	if err != nil || str(doc.Get("template_id")) != "" {
		return err
	}
	account, coreID, err := s.accountOrDefault(ctx, orgID, str(doc.Get("platform_account")))
	if err != nil {
		return err
	}
	comps, format, samples := definition(doc)
	in := templates.Input{AccountID: &coreID, Name: str(doc.Get("template_name")), Language: str(doc.Get("language_code")),
		Category: str(doc.Get("category")), ParameterFormat: format, Components: comps, SampleValues: samples}
	t, err := s.Templates.Create(ctx, orgID, in)
	if apperr.Is(err, apperr.Conflict) { // submitted by an earlier attempt
		t, err = s.coreTemplate(ctx, orgID, coreID, in.Name, in.Language)
	}
	change := map[string]any{"platform_account": account}
	switch {
	case apperr.Is(err, apperr.Invalid):
		change["status"] = "REJECTED: " + message(err)
		return s.updateNow(ctx, orgID, DoctypeTemplate, name, change)
	case err != nil:
		return err
	}
	// The provider's review outcome can arrive (and be consumed) before
	// the document has its template_id, which is how the outcome finds the
	// document (TemplateEvents): the status recorded is the core
	// template's, read under its row lock in the transaction that sets
	// template_id, not the PENDING of Create's answer, which would stay
	// for good.
	change["template_id"] = t.ProviderTemplateID
	var publish func(context.Context)
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		status, err := s.Templates.StatusLocked(ctx, tx, orgID, t.ID)
		if err != nil {
			return err
		}
		change["status"] = status
		_, publish, err = s.frame.UpdateDocIn(ctx, tx, orgID, By, DoctypeTemplate, name, change)
		return err
	})
	if err == nil {
		publish(ctx)
	}
	return err
}

func message(err error) string {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// coreTemplate finds the account's template by name and language.
func (s *Service) coreTemplate(ctx context.Context, orgID, accountID uuid.UUID, name, language string) (*models.Template, error) {
	for page := 1; ; page++ {
		rows, _, err := s.Templates.List(ctx, orgID, templates.Filter{AccountID: &accountID, Search: name}, paging.Params{Page: page, Limit: 100})
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if rows[i].Name == name && rows[i].Language == language {
				return &rows[i], nil
			}
		}
		if len(rows) < 100 {
			return nil, apperr.NotFoundf("template %s (%s) not found", name, language)
		}
	}
}

// accountOrDefault resolves a Platform Account name ("" is the default
// outgoing account) to itself and its core account.
func (s *Service) accountOrDefault(ctx context.Context, orgID uuid.UUID, name string) (string, uuid.UUID, error) {
	if name == "" {
		names, err := s.frame.NamesBy(ctx, nil, orgID, DoctypeAccount, "is_default_outgoing", []string{"1"})
		if err != nil {
			return "", uuid.Nil, err
		}
		if name = names["1"]; name == "" {
			return "", uuid.Nil, docframe.Validationf("platform_account is required: no Platform Account is the default outgoing one")
		}
	}
	id, err := s.core(ctx, nil, orgID, name)
	return name, id, err
}

// updateNow saves changes to a document as the integration, in a
// transaction of its own, and publishes After Save after the commit.
func (s *Service) updateNow(ctx context.Context, orgID uuid.UUID, doctype, name string, change map[string]any) error {
	var publish func(context.Context)
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		_, publish, err = s.frame.UpdateDocIn(ctx, tx, orgID, By, doctype, name, change)
		return err
	})
	if err == nil {
		publish(ctx)
	}
	return err
}

// TemplateEvents wraps the core templates consumer of the provider's
// template status updates: the core template is updated first, then the
// Platform Template with that template_id, in the same transaction.
// app/ registers it in the core consumer's place (one consumer per event
// type).
func (s *Service) TemplateEvents(core *templates.Service) inbound.EventConsumer {
	return templateEvents{s: s, core: core}
}

type templateEvents struct {
	s    *Service
	core *templates.Service
}

func (t templateEvents) ConsumerName() string { return t.core.ConsumerName() + "+wharfapp" }
func (t templateEvents) EventType() string    { return t.core.EventType() }

func (t templateEvents) ConsumeEvent(ctx context.Context, tx *gorm.DB, ev *inbound.Event) (func(context.Context), error) {
	after, err := t.core.ConsumeEvent(ctx, tx, ev)
	if err != nil {
		return nil, err
	}
	var v platform.TemplateStatusValue
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		return nil, err
	}
	id := v.MessageTemplateID.String()
	names, err := t.s.frame.NamesBy(ctx, tx, ev.Account.OrganizationID, DoctypeTemplate, "template_id", []string{id})
	if err != nil || names[id] == "" {
		return after, err
	}
	_, publish, err := t.s.frame.UpdateDocIn(ctx, tx, ev.Account.OrganizationID, By, DoctypeTemplate, names[id],
		map[string]any{"status": v.Event})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) {
		if after != nil {
			after(ctx)
		}
		publish(ctx)
	}, nil
}
