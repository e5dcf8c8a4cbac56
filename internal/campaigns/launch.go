package campaigns

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/templates"
	"wharf/models"
)

// Launch is a campaign created, filled and started at once, inside the
// caller's transaction: for a caller whose own record must commit or roll
// back with the campaign (a bulk message document is submitted in the same
// transaction as its campaign is created).
type Launch struct {
	Name       string
	AccountID  uuid.UUID
	TemplateID uuid.UUID
	CreatedBy  *uuid.UUID
	// VariableMapping maps each placeholder of the template to a field of
	// the recipients (name, phone_number or a data field), as a campaign's;
	// nil maps each placeholder to the data field of its own key ("1",
	// "2", ... for a positional template).
	VariableMapping map[string]string
	// ScheduledAt in the future schedules the campaign (StartDue starts
	// it); nil or past starts it now.
	ScheduledAt *time.Time
	// Recipients: phone_number, name and data fields, as Import takes them.
	// Every number must be valid and every mapped field filled: a launch
	// refuses rather than skips (the caller validated them already).
	Recipients []RecipientInput
	// Projected: a document of the caller follows the campaign (a bulk
	// message): its changes record campaign.changed in the events outbox
	// (project.go).
	Projected bool
}

// LaunchTx creates the campaign in tx, sending or scheduled, with its
// recipients pending. The caller calls StartLanes after its commit; when
// that call is lost, the sweep starts the lanes of a sending campaign with
// pending recipients.
func (s *Service) LaunchTx(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, l Launch) (*models.Campaign, error) {
	name := strings.TrimSpace(l.Name)
	if name == "" || len([]rune(name)) > 200 {
		return nil, apperr.Invalidf("name is required (at most 200 characters)")
	}
	if len(l.Recipients) == 0 {
		return nil, apperr.Invalidf("there are no recipients")
	}
	if len(l.Recipients) > MaxImport {
		return nil, apperr.Invalidf("at most %d recipients per campaign", MaxImport)
	}
	if err := checkWidth(l.Recipients); err != nil {
		return nil, err
	}
	a, err := s.accounts.Get(ctx, orgID, l.AccountID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Invalidf("the account is not an account of this organization")
	}
	if err != nil {
		return nil, err
	}
	if a.Status != models.AccountActive {
		return nil, apperr.Invalidf("account %q is %s, not active", a.Name, a.Status)
	}
	t, err := s.templates.Sendable(ctx, orgID, &l.AccountID, &l.TemplateID, "")
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Invalidf("the template is not a template of this organization")
	}
	if err != nil {
		return nil, err
	}
	slots := templates.Keys(templates.Slots(t))
	if l.VariableMapping == nil {
		l.VariableMapping = make(map[string]string, len(slots))
		for _, k := range slots {
			l.VariableMapping[k] = k
		}
	}
	for _, k := range slots {
		if l.VariableMapping[k] == "" {
			return nil, apperr.Invalidf("template %s placeholder {{%s}} has no value", t.Name, k)
		}
	}
	for k := range l.VariableMapping {
		if !slices.Contains(slots, k) {
			return nil, apperr.Invalidf("template %s has no placeholder {{%s}} (placeholders: %s)", t.Name, k, strings.Join(slots, ", "))
		}
	}
	c := models.Campaign{OrganizationID: orgID, AccountID: &l.AccountID, TemplateID: &t.ID, TemplateName: t.Name, Name: name,
		Status: models.CampaignSending, CreatedBy: l.CreatedBy, ScheduledAt: l.ScheduledAt, Projected: l.Projected}
	c.VariableMapping.V = l.VariableMapping
	now := s.now()
	if l.ScheduledAt != nil && l.ScheduledAt.After(now) {
		c.Status = models.CampaignScheduled
	} else {
		c.StartedAt, c.RunGeneration = &now, 1
	}
	rows := make([]models.CampaignRecipient, 0, len(l.Recipients))
	seen := make(map[string]bool, len(l.Recipients))
	for i, r := range l.Recipients {
		raw, _ := r["phone_number"].(string)
		number, err := phone.Normalize(raw)
		if err != nil {
			return nil, apperr.Invalidf("recipient %d: %q is not a valid phone number in international format", i+1, raw)
		}
		if seen[number] {
			return nil, apperr.Invalidf("recipient %d: %s appears more than once", i+1, number)
		}
		seen[number] = true
		rec := models.CampaignRecipient{OrganizationID: orgID, PhoneNumber: number, Status: models.RecipientPending}
		rec.Name, _ = r["name"].(string)
		rec.Name = strings.TrimSpace(rec.Name)
		rec.Data.V = map[string]any{}
		for k, v := range r {
			if k != "phone_number" && k != "name" {
				rec.Data.V[k] = v
			}
		}
		if _, missing := s.values(&c, t, &rec); len(missing) > 0 {
			return nil, apperr.Invalidf("recipient %d (%s) has no value for %s", i+1, number, strings.Join(missing, ", "))
		}
		rows = append(rows, rec)
	}
	c.TotalRecipients, c.PendingCount = len(rows), len(rows)
	if err := tx.WithContext(ctx).Create(&c).Error; err != nil {
		return nil, err
	}
	for start := 0; start < len(rows); start += 1000 {
		chunk := rows[start:min(start+1000, len(rows))]
		for i := range chunk {
			chunk[i].CampaignID = c.ID
		}
		if err := tx.WithContext(ctx).Exec(insertRecipients(len(chunk)), recipientArgs(chunk)...).Error; err != nil {
			return nil, fmt.Errorf("campaigns: insert recipients: %w", err)
		}
	}
	return &c, nil
}

// StartLanes starts the lanes of a launched campaign once its transaction
// committed (nothing for a scheduled one: StartDue starts it).
func (s *Service) StartLanes(ctx context.Context, c *models.Campaign) {
	if c.Status == models.CampaignSending {
		s.enqueueLanes(ctx, c)
	}
}
