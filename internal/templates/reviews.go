package templates

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
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
	// A submission in flight stores its row before this looks (Create).
	if err := lockReview(ctx, tx, ev.Account.ID, v.MessageTemplateName, v.MessageTemplateLanguage); err != nil {
		return nil, err
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

// StatusLocked reads a template's status in tx under its row lock. A
// caller that records the status elsewhere in the same transaction (the
// framework's Platform Template) cannot then miss a review outcome: an
// outcome consumed before the lock is what it reads, and one consumed
// after waits for its commit (ConsumeEvent updates this row first).
func (s *Service) StatusLocked(ctx context.Context, tx *gorm.DB, orgID, id uuid.UUID) (string, error) {
	var status string
	err := tx.WithContext(ctx).Raw(`SELECT status FROM templates WHERE id = ? AND organization_id = ? FOR UPDATE`, id, orgID).
		Scan(&status).Error
	return status, err
}

// lockReview takes, until tx ends, the lock that orders a template's
// submission (Create: the provider call and the row's insert) before the
// consumption of its review outcome.
func lockReview(ctx context.Context, tx *gorm.DB, accountID uuid.UUID, name, language string) error {
	return tx.WithContext(ctx).Exec(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`,
		"template-review:"+accountID.String()+"/"+name+"/"+language).Error
}
