package templates

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
	"wharf/platform"
)

// Filter narrows a template list.
type Filter struct {
	Status, Category, Search string
	AccountID                *uuid.UUID
}

// List returns a page of the organization's templates, newest first.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, f Filter, pg paging.Params) ([]models.Template, int64, error) {
	q := s.db.WithContext(ctx).Model(&models.Template{}).Scopes(tenant.Scope(orgID))
	if f.Status != "" {
		q = q.Where("status = ?", strings.ToUpper(f.Status))
	}
	if f.Category != "" {
		q = q.Where("category = ?", strings.ToUpper(f.Category))
	}
	if f.AccountID != nil {
		q = q.Where("account_id = ?", *f.AccountID)
	}
	if f.Search != "" {
		q = q.Where("name ILIKE ?", paging.Contains(f.Search))
	}
	return paging.Find[models.Template](q, pg, "created_at DESC, id")
}

// Get returns one template.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*models.Template, error) {
	return tenant.Get[models.Template](ctx, s.db, orgID, id, "template not found")
}

// Input creates a template.
type Input struct {
	AccountID       *uuid.UUID
	Name, Language  string
	Category        string
	ParameterFormat string
	Components      []map[string]any
	SampleValues    []SampleValue
}

func normalizeFormat(f string) string {
	if strings.EqualFold(f, "named") {
		return "named"
	}
	if f == "" || strings.EqualFold(f, "positional") {
		return "positional"
	}
	return f // validate refuses it
}

// Create validates a template, submits it to the provider for approval and
// stores it PENDING. Nothing is stored when the provider refuses it.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in Input) (*models.Template, error) {
	defer s.recent.Clear() // after the change, for RecentSendable
	if in.AccountID == nil {
		return nil, apperr.Invalidf("account_id is required")
	}
	a, err := s.accounts.Get(ctx, orgID, *in.AccountID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, apperr.Invalidf("account_id does not name an account of this organization")
	}
	if err != nil {
		return nil, err
	}
	in.Name, in.Language, in.Category = strings.TrimSpace(in.Name), strings.TrimSpace(in.Language), strings.ToUpper(strings.TrimSpace(in.Category))
	format := normalizeFormat(in.ParameterFormat)
	comps, err := validate(in.Name, in.Language, in.Category, in.Components, format, in.SampleValues)
	if err != nil {
		return nil, err
	}
	t := models.Template{ID: uuid.New(), OrganizationID: orgID, AccountID: a.ID, Name: in.Name, Language: in.Language,
		Category: in.Category, Status: models.TemplatePending, ParameterFormat: format}
	t.Components.V = comps
	t.SampleValues.V = samplesToMaps(in.SampleValues)
	// The provider answers the create, then reviews; its outcome can come
	// back (a webhook, consumed by the worker) before the row below is
	// stored. The submission holds the template's review lock until its
	// row is committed, and ConsumeEvent takes the same lock first, so the
	// outcome waits for the row instead of finding nothing (a test
	// provider approving in 50 ms lost that race on a busy machine).
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockReview(ctx, tx, a.ID, in.Name, in.Language); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.Template{}).Where("account_id = ? AND name = ? AND language = ?", a.ID, in.Name, in.Language).
			Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return apperr.Conflictf("the account already has a template %s in %s", in.Name, in.Language)
		}
		created, err := s.provider.CreateTemplate(ctx, a.Creds(), s.definition(&t, in.SampleValues))
		if err != nil {
			return providerError("submitting the template", err)
		}
		t.ProviderTemplateID = created.ID
		if created.Status != "" {
			t.Status = created.Status
		}
		if err := tx.Create(&t).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return apperr.Conflictf("the account already has a template %s in %s", t.Name, t.Language)
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func (s *Service) definition(t *models.Template, samples []SampleValue) platform.TemplateDefinition {
	comps, _ := json.Marshal(withExamples(t.Components.V, IsNamed(t), samples))
	format := "POSITIONAL"
	if IsNamed(t) {
		format = "NAMED"
	}
	return platform.TemplateDefinition{Name: t.Name, Language: t.Language, Category: t.Category, ParameterFormat: format, Components: comps}
}

func providerError(step string, err error) error {
	pe, ok := platform.AsError(err)
	if !ok {
		return err
	}
	if pe.Class == platform.Permanent {
		return apperr.Invalidf("the provider refused %s: %s", step, pe.Error())
	}
	return apperr.Upstreamf("the provider failed while %s: %s", step, pe.Error())
}

func samplesToMaps(samples []SampleValue) []map[string]any {
	out := make([]map[string]any, 0, len(samples))
	for _, sv := range samples {
		b, _ := json.Marshal(sv)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		out = append(out, m)
	}
	return out
}

func samplesFromMaps(ms []map[string]any) []SampleValue {
	b, _ := json.Marshal(ms)
	var out []SampleValue
	_ = json.Unmarshal(b, &out)
	return out
}

// Update replaces the components (and sample values) of a template that is
// not approved. The change reaches the provider with Publish; an approved
// template cannot change, so what is sent is always what was approved.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, components []map[string]any, samples *[]SampleValue) (*models.Template, error) {
	defer s.recent.Clear() // after the change, for RecentSendable
	t, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if t.Status == models.TemplateApproved {
		return nil, apperr.Conflictf("an APPROVED template cannot be edited: create a new template instead")
	}
	sv := samplesFromMaps(t.SampleValues.V)
	if samples != nil {
		sv = *samples
	}
	comps, err := validateComponents(components, t.ParameterFormat, sv)
	if err != nil {
		return nil, err
	}
	err = s.db.WithContext(ctx).Model(t).Updates(map[string]any{"components": models.JSON[[]map[string]any]{V: comps},
		"sample_values": models.JSON[[]map[string]any]{V: samplesToMaps(sv)}, "updated_at": s.now()}).Error
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, id)
}

// Publish submits the template's current components for review: a new
// submission when the provider does not have it, an edit otherwise. The
// template becomes PENDING.
func (s *Service) Publish(ctx context.Context, orgID, id uuid.UUID) (*models.Template, error) {
	defer s.recent.Clear() // after the change, for RecentSendable
	t, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if t.Status == models.TemplateApproved {
		return nil, apperr.Conflictf("the template is already APPROVED")
	}
	a, err := s.accounts.Get(ctx, orgID, t.AccountID)
	if err != nil {
		return nil, err
	}
	def := s.definition(t, samplesFromMaps(t.SampleValues.V))
	updates := map[string]any{"status": models.TemplatePending, "rejected_reason": "", "updated_at": s.now()}
	if t.ProviderTemplateID == "" {
		created, err := s.provider.CreateTemplate(ctx, a.Creds(), def)
		if err != nil {
			return nil, providerError("submitting the template", err)
		}
		updates["provider_template_id"] = created.ID
	} else if err := s.provider.EditTemplate(ctx, a.Creds(), t.ProviderTemplateID, def); err != nil {
		return nil, providerError("resubmitting the template", err)
	}
	if err := s.db.WithContext(ctx).Model(t).Updates(updates).Error; err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, id)
}

// Delete removes the template at the provider, then here. A template the
// provider no longer knows is deleted here anyway.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	defer s.recent.Clear() // after the change, for RecentSendable
	t, err := s.Get(ctx, orgID, id)
	if err != nil {
		return err
	}
	a, err := s.accounts.Get(ctx, orgID, t.AccountID)
	if err != nil {
		return err
	}
	if err := s.provider.DeleteTemplate(ctx, a.Creds(), t.Name, t.ProviderTemplateID); err != nil {
		if pe, ok := platform.AsError(err); !ok || pe.Code != 100 {
			return providerError("deleting the template", err)
		}
	}
	return s.db.WithContext(ctx).Delete(t).Error
}
