package chatbot

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

var variableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// FlowInput creates or replaces a conversation flow; nil fields are
// unchanged on update.
type FlowInput struct {
	Name              *string
	TriggerKeywords   *[]string
	InitialMessage    *string
	CompletionMessage *string
	Enabled           *bool
	PanelConfig       *map[string]any
	Steps             *[]models.FlowStep
}

// Flows lists the organization's conversation flows by name.
func (s *Service) Flows(ctx context.Context, orgID uuid.UUID) ([]models.ChatbotFlow, error) {
	var rows []models.ChatbotFlow
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Order("lower(name), id").Find(&rows).Error
	return rows, err
}

// Flow answers one conversation flow.
func (s *Service) Flow(ctx context.Context, orgID, id uuid.UUID) (*models.ChatbotFlow, error) {
	var f models.ChatbotFlow
	if err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Take(&f, "id = ?", id).Error; err != nil {
		return nil, notFound(err, "flow not found")
	}
	return &f, nil
}

// CreateFlow validates and stores a conversation flow.
func (s *Service) CreateFlow(ctx context.Context, orgID uuid.UUID, in FlowInput) (*models.ChatbotFlow, error) {
	f := models.ChatbotFlow{OrganizationID: orgID, Enabled: true}
	f.PanelConfig.V = map[string]any{}
	if in.Name == nil || in.Steps == nil {
		return nil, apperr.Invalidf("name and steps are required")
	}
	if err := keepFlowSecrets(&in, nil); err != nil {
		return nil, err
	}
	if err := s.applyFlow(ctx, &f, in); err != nil {
		return nil, err
	}
	if err := s.db.WithContext(ctx).Create(&f).Error; err != nil {
		return nil, duplicateFlow(err)
	}
	return &f, nil
}

// UpdateFlow validates and saves the fields given. Sessions already in the
// flow continue with the new steps at their step number.
func (s *Service) UpdateFlow(ctx context.Context, orgID, id uuid.UUID, in FlowInput) (*models.ChatbotFlow, error) {
	f, err := s.Flow(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if err := keepFlowSecrets(&in, f.Steps.V); err != nil {
		return nil, err
	}
	if err := s.applyFlow(ctx, f, in); err != nil {
		return nil, err
	}
	f.UpdatedAt = s.now()
	if err := s.db.WithContext(ctx).Save(f).Error; err != nil {
		return nil, duplicateFlow(err)
	}
	return f, nil
}

// DeleteFlow removes a flow; its active sessions end.
func (s *Service) DeleteFlow(ctx context.Context, orgID, id uuid.UUID) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := s.now()
		if err := tx.Exec(`UPDATE chatbot_sessions SET ended_at = ?, end_reason = 'flow deleted' WHERE flow_id = ? AND organization_id = ?
			AND ended_at IS NULL`, now, id, orgID).Error; err != nil {
			return err
		}
		return deleted(tx.Scopes(tenant.Scope(orgID)).Delete(&models.ChatbotFlow{}, "id = ?", id), "flow not found")
	})
}

func duplicateFlow(err error) error {
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return apperr.Conflictf("a flow with this name already exists")
	}
	return err
}

func (s *Service) applyFlow(ctx context.Context, f *models.ChatbotFlow, in FlowInput) error {
	if in.Name != nil {
		f.Name = strings.TrimSpace(*in.Name)
	}
	if f.Name == "" || len([]rune(f.Name)) > 100 {
		return apperr.Invalidf("name is required (at most 100 characters)")
	}
	if in.TriggerKeywords != nil {
		kw, err := keywords("trigger_keywords", *in.TriggerKeywords, false)
		if err != nil {
			return err
		}
		f.TriggerKeywords.V = kw
	}
	if f.TriggerKeywords.V == nil {
		f.TriggerKeywords.V = []string{}
	}
	for _, t := range []struct {
		name string
		dst  *string
		v    *string
	}{{"initial_message", &f.InitialMessage, in.InitialMessage}, {"completion_message", &f.CompletionMessage, in.CompletionMessage}} {
		if t.v != nil {
			*t.dst = strings.TrimSpace(*t.v)
			if len([]rune(*t.dst)) > maxText {
				return apperr.Invalidf("%s is longer than %d characters", t.name, maxText)
			}
		}
	}
	if in.Enabled != nil {
		f.Enabled = *in.Enabled
	}
	if in.PanelConfig != nil {
		f.PanelConfig.V = *in.PanelConfig
		if f.PanelConfig.V == nil {
			f.PanelConfig.V = map[string]any{}
		}
	}
	if in.Steps != nil {
		steps, err := s.validSteps(ctx, f.OrganizationID, *in.Steps)
		if err != nil {
			return err
		}
		f.Steps.V = steps
	}
	return nil
}
