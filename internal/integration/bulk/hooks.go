package bulk

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/campaigns"
	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/internal/templates"
)

// listHook checks a recipient list's rows.
type listHook struct{}

func (listHook) Doctypes() []string { return []string{RecipientList} }

func (listHook) Handle(_ context.Context, _ *gorm.DB, ev docframe.Event, d *docframe.Doc) error {
	if ev != docframe.Validate {
		return nil
	}
	_, err := readRecipients("recipients", rowsOf(d.Get("recipients")))
	return err
}

// bulkHook is a bulk message's life: validate counts and checks its
// recipients, on_submit launches its campaign, on_cancel cancels it.
type bulkHook struct{ s *Service }

func (bulkHook) Doctypes() []string { return []string{BulkMessage} }

func (h bulkHook) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, d *docframe.Doc) error {
	switch ev {
	case docframe.Validate:
		return h.validate(ctx, d)
	case docframe.OnSubmit:
		return h.submit(ctx, tx, d)
	case docframe.OnCancel:
		return h.cancel(ctx, tx, d)
	}
	return nil
}

// validate runs on every save of a draft and before its submit: the
// system fields are the draft's (a client cannot preset them), the
// recipients are read and counted, a draft without any is refused.
func (h bulkHook) validate(ctx context.Context, d *docframe.Doc) error {
	if d.Docstatus != 0 {
		return nil
	}
	d.Set("status", StatusDraft)
	d.Set("sent_count", 0)
	d.Set("failed_count", 0)
	d.Set("campaign", nil)
	recips, err := h.s.recipientsOf(ctx, d)
	if err != nil {
		return err
	}
	d.Set("recipient_count", len(recips))
	if _, err := variables(d.Get("template_variables"), "template_variables"); err != nil {
		return err
	}
	if _, err := parseDatetime(d.Get("scheduled_time")); err != nil {
		return err
	}
	if _, _, err := attachment(d.Get("attach")); err != nil {
		return err
	}
	return nil
}

// recipientsOf reads a bulk message's recipients: its own rows, or its
// recipient list's. No recipients is refused.
func (s *Service) recipientsOf(ctx context.Context, d *docframe.Doc) ([]recipient, error) {
	var recips []recipient
	var err error
	if text(d.Get("recipient_type")) == "Recipient List" {
		list := text(d.Get("recipient_list"))
		if list == "" {
			return nil, docframe.Validationf("Recipient List is required when Recipient Type is Recipient List")
		}
		doc, gerr := s.frame.Get(ctx, system, d.OrganizationID, RecipientList, list)
		if apperr.Is(gerr, apperr.NotFound) {
			return nil, docframe.Validationf("Recipient List %s does not exist", list)
		}
		if gerr != nil {
			return nil, gerr
		}
		recips, err = readRecipients("Recipient List "+list+" recipients", rowsOf(doc["recipients"]))
	} else {
		recips, err = readRecipients("recipients", rowsOf(d.Get("recipients")))
	}
	if err != nil {
		return nil, err
	}
	if len(recips) == 0 {
		return nil, docframe.Validationf("%s %s has no recipients", BulkMessage, d.Name)
	}
	return recips, nil
}

// submit launches the campaign in the document's transaction: both commit
// or neither. The campaign is projected: the document follows it from the
// events outbox (projection.go). Common variables come from template_variables, Unique ones
// from each recipient's recipient_data (or, when template_variables maps
// a placeholder to a key of it, from that key), keyed "1", "2", ...
func (h bulkHook) submit(ctx context.Context, tx *gorm.DB, d *docframe.Doc) error {
	s := h.s
	recips, err := s.recipientsOf(ctx, d)
	if err != nil {
		return err
	}
	vars, err := variables(d.Get("template_variables"), "template_variables")
	if err != nil {
		return err
	}
	unique := text(d.Get("variable_type")) == "Unique"
	accountID, err := s.resolver.AccountFor(ctx, d.OrganizationID, text(d.Get("platform_account")))
	if err != nil {
		return refusal(err)
	}
	templateID, err := s.resolver.TemplateFor(ctx, d.OrganizationID, accountID, text(d.Get("template")))
	if err != nil {
		return refusal(err)
	}
	at, err := parseDatetime(d.Get("scheduled_time"))
	if err != nil {
		return err
	}
	link, filename, err := attachment(d.Get("attach"))
	if err != nil {
		return err
	}
	in := make([]campaigns.RecipientInput, len(recips))
	for i, r := range recips {
		row := campaigns.RecipientInput{"phone_number": r.mobile, "name": r.name}
		if unique {
			for k, v := range r.data {
				row[k] = v
			}
			for k, v := range vars {
				if key, ok := v.(string); ok && row[k] == nil && r.data[key] != nil {
					row[k] = r.data[key]
				}
			}
		} else {
			for k, v := range vars {
				row[k] = v
			}
		}
		delete(row, "phone_number")
		delete(row, "name")
		row["phone_number"], row["name"] = r.mobile, r.name
		if link != "" {
			// The campaign fills a media header from these keys of each
			// recipient (its default variable mapping); a template without
			// one ignores them.
			row[templates.HeaderMediaKey] = link
			if filename != "" {
				row[templates.HeaderFilenameKey] = filename
			}
		}
		in[i] = row
	}
	title := d.Name + ": " + text(d.Get("title"))
	c, err := s.campaigns.LaunchTx(ctx, tx, d.OrganizationID, campaigns.Launch{Name: apperr.Clip(title, 200), AccountID: accountID,
		TemplateID: templateID, ScheduledAt: at, Recipients: in, Projected: true})
	if err != nil {
		return refusal(err)
	}
	values := map[string]any{"status": StatusQueued, "campaign": c.ID.String(), "recipient_count": len(recips), "sent_count": 0, "failed_count": 0}
	for k, v := range values {
		d.Set(k, v)
	}
	return s.frame.SetValues(ctx, tx, d.OrganizationID, BulkMessage, d.Name, values)
}

// cancel stops the campaign (one that completed stays completed) and
// marks the document.
func (h bulkHook) cancel(ctx context.Context, tx *gorm.DB, d *docframe.Doc) error {
	if id, err := uuid.Parse(text(d.Get("campaign"))); err == nil {
		if _, err := h.s.campaigns.Cancel(ctx, d.OrganizationID, id); err != nil && !apperr.Is(err, apperr.Conflict) && !apperr.Is(err, apperr.NotFound) {
			return err
		}
	}
	d.Set("status", StatusCancelled)
	return h.s.frame.SetValues(ctx, tx, d.OrganizationID, BulkMessage, d.Name, map[string]any{"status": StatusCancelled})
}

// refusal turns the core's refusals (a bad account, template or variables)
// into the framework's ValidationError (417); other errors pass.
func refusal(err error) error {
	var de *docframe.Error
	if errors.As(err, &de) {
		return err
	}
	var ae *apperr.Error
	if errors.As(err, &ae) && (ae.Kind == apperr.Invalid || ae.Kind == apperr.NotFound || ae.Kind == apperr.Conflict) {
		return docframe.Validationf("%s", ae.Message)
	}
	return err
}

// DocumentEvent starts a submitted bulk message's campaign lanes once the
// submit committed (docframe.EventSink). When this is lost, the campaign
// sweep starts them.
func (s *Service) DocumentEvent(ctx context.Context, e docframe.DocEvent) {
	if e.Event != docframe.EventAfterSubmit || e.Doc.Doctype != BulkMessage {
		return
	}
	id, err := uuid.Parse(text(e.Doc.Get("campaign")))
	if err != nil {
		return
	}
	c, err := s.campaigns.Get(ctx, e.OrganizationID, id)
	if err != nil {
		s.log.Warn("cannot start a bulk message's campaign; the sweep will", "bulk_message", e.Doc.Name, "error", err)
		return
	}
	s.campaigns.StartLanes(ctx, c)
}
