package chatbot

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// Context types: static text, or text fetched from an API when used.
var ContextTypes = []string{"static", "api"}

// MaxAIContexts is how many AI contexts an organization may have: each
// `api` one is a fetch before the model's answer, and all of them crowd
// the prompt.
const MaxAIContexts = 20

// ContextInput creates or changes an AI context; nil fields are unchanged.
type ContextInput struct {
	Name            *string
	TriggerKeywords *[]string
	ContextType     *string
	Content         *string
	Priority        *int
	Enabled         *bool
}

// Contexts lists the organization's AI contexts, highest priority first.
func (s *Service) Contexts(ctx context.Context, orgID uuid.UUID) ([]models.AIContext, error) {
	var rows []models.AIContext
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Order("priority DESC, created_at, id").Find(&rows).Error
	return rows, err
}

// CreateContext validates and stores an AI context, the organization's
// MaxAIContexts-th at most (409 past it).
func (s *Service) CreateContext(ctx context.Context, orgID uuid.UUID, in ContextInput) (*models.AIContext, error) {
	c := models.AIContext{OrganizationID: orgID, Enabled: true}
	c.TriggerKeywords.V = []string{}
	if in.Name == nil || in.ContextType == nil || in.Content == nil {
		return nil, apperr.Invalidf("name, context_type and content are required")
	}
	if err := keepContextSecret(in.Content, nil); err != nil {
		return nil, err
	}
	if err := s.applyContext(&c, in); err != nil {
		return nil, err
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Creations of one organization take turns, so two at once cannot
		// both see room for one more.
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtext('chatbot_ai_contexts'), hashtext(?))`, orgID.String()).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&models.AIContext{}).Scopes(tenant.Scope(orgID)).Count(&n).Error; err != nil {
			return err
		}
		if n >= MaxAIContexts {
			return apperr.Conflictf("an organization has at most %d AI contexts; delete one first", MaxAIContexts)
		}
		return tx.Create(&c).Error
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// UpdateContext validates and saves the fields given.
func (s *Service) UpdateContext(ctx context.Context, orgID, id uuid.UUID, in ContextInput) (*models.AIContext, error) {
	var c models.AIContext
	if err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Take(&c, "id = ?", id).Error; err != nil {
		return nil, notFound(err, "AI context not found")
	}
	if err := keepContextSecret(in.Content, &c); err != nil {
		return nil, err
	}
	if err := s.applyContext(&c, in); err != nil {
		return nil, err
	}
	c.UpdatedAt = s.now()
	return &c, s.db.WithContext(ctx).Save(&c).Error
}

// DeleteContext removes an AI context.
func (s *Service) DeleteContext(ctx context.Context, orgID, id uuid.UUID) error {
	return deleted(s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.AIContext{}, "id = ?", id), "AI context not found")
}

func (s *Service) applyContext(c *models.AIContext, in ContextInput) error {
	if in.Name != nil {
		c.Name = strings.TrimSpace(*in.Name)
	}
	if c.Name == "" || len([]rune(c.Name)) > 100 {
		return apperr.Invalidf("name is required (at most 100 characters)")
	}
	if in.ContextType != nil {
		c.ContextType = strings.TrimSpace(*in.ContextType)
	}
	if !slices.Contains(ContextTypes, c.ContextType) {
		return apperr.Invalidf("context_type must be static or api")
	}
	if in.Content != nil {
		c.Content = strings.TrimSpace(*in.Content)
	}
	if c.Content == "" || len([]rune(c.Content)) > 20000 {
		return apperr.Invalidf("content is required (at most 20,000 characters)")
	}
	if c.ContextType == "api" {
		if err := s.checkURL(c.Content); err != nil {
			return apperr.Invalidf("content of an api context is the URL to fetch: %v", err)
		}
	}
	if in.TriggerKeywords != nil {
		kw, err := keywords("trigger_keywords", *in.TriggerKeywords, false)
		if err != nil {
			return err
		}
		c.TriggerKeywords.V = kw
	}
	if in.Priority != nil {
		c.Priority = *in.Priority
	}
	if in.Enabled != nil {
		c.Enabled = *in.Enabled
	}
	return nil
}
