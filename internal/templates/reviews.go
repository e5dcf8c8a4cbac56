package templates

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/models"
	"wharf/platform"
)

// ConsumerName implements inbound.Consumer: templates apply the
// provider's review outcomes (template status updates).
func (s *Service) ConsumerName() string { return "templates" }

// EventType implements inbound.EventConsumer.
func (s *Service) EventType() string { return inbound.EventTemplateStatus }

// ConsumeEvent implements inbound.EventConsumer: it records a template's
// review outcome (status and rejection reason) on the account's template
// with that provider id, or name and language. An update for a template
// we do not have is only logged.
func (s *Service) ConsumeEvent(ctx context.Context, tx *gorm.DB, ev *inbound.Event) (func(context.Context), error) {
	var v platform.TemplateStatusValue
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		return nil, err
	}
	reason := v.Reason
	if reason == "NONE" {
		reason = ""
	}
	res := tx.WithContext(ctx).Model(&models.Template{}).
		Where("account_id = ? AND (provider_template_id = ? OR (name = ? AND language = ?))",
			ev.Account.ID, v.MessageTemplateID.String(), v.MessageTemplateName, v.MessageTemplateLanguage).
		Updates(map[string]any{"status": v.Event, "rejected_reason": reason, "updated_at": s.now()})
	if res.RowsAffected == 0 {
		s.log.Info("status for an unknown template ignored", "template", v.MessageTemplateName, "event", v.Event)
	}
	return nil, res.Error
}
