package chatbot

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/apperr"
	"wharf/internal/tenant"
	"wharf/models"
)

// Step message and input types.
var (
	MessageTypes = []string{"text", "buttons", "api_fetch", "platform_flow", "transfer"}
	InputTypes   = []string{"", "none", "text", "select"}
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

// validSteps checks the steps and sorts them by step_order: unique orders,
// known message and input types, select steps with 1 to 10 buttons of
// titles up to 20 characters, store_as a variable name, a transfer step's
// team in the organization, api_fetch with an allowed URL, platform_flow
// with a flow id and a call to action.
func (s *Service) validSteps(ctx context.Context, orgID uuid.UUID, in []models.FlowStep) ([]models.FlowStep, error) {
	if len(in) == 0 || len(in) > 50 {
		return nil, apperr.Invalidf("steps must have 1 to 50 steps")
	}
	out := make([]models.FlowStep, len(in))
	orders := map[int]bool{}
	for i, st := range in {
		where := "steps[" + strconv.Itoa(i) + "]"
		if orders[st.StepOrder] {
			return nil, apperr.Invalidf("%s: step_order %d is used twice", where, st.StepOrder)
		}
		orders[st.StepOrder] = true
		if !slices.Contains(MessageTypes, st.MessageType) {
			return nil, apperr.Invalidf("%s: message_type must be one of %s", where, strings.Join(MessageTypes, ", "))
		}
		if st.InputType == "none" {
			st.InputType = ""
		}
		if !slices.Contains(InputTypes, st.InputType) {
			return nil, apperr.Invalidf("%s: input_type must be text, select or none", where)
		}
		st.Message = strings.TrimSpace(st.Message)
		if len([]rune(st.Message)) > maxText {
			return nil, apperr.Invalidf("%s: message is longer than %d characters", where, maxText)
		}
		if (st.MessageType == "text" || st.MessageType == "buttons") && st.Message == "" {
			return nil, apperr.Invalidf("%s: a %s step needs a message", where, st.MessageType)
		}
		if st.MessageType == "buttons" || st.InputType == "select" {
			buttons, err := Buttons(where+".buttons", st.Buttons, 1)
			if err != nil {
				return nil, err
			}
			st.Buttons = buttons
			if st.MessageType == "buttons" && st.InputType == "" {
				st.InputType = "select"
			}
		} else {
			st.Buttons = nil
		}
		if st.StoreAs != "" && !variableName.MatchString(st.StoreAs) {
			return nil, apperr.Invalidf("%s: store_as must be a variable name (letters, digits, _)", where)
		}
		switch st.MessageType {
		case "transfer":
			st.InputType = ""
			if st.TransferConfig == nil {
				st.TransferConfig = &models.TransferConfig{}
			}
			if id := st.TransferConfig.TeamID; id != nil {
				var ok bool
				if err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM teams WHERE id = ? AND organization_id = ?)`, *id, orgID).Scan(&ok).Error; err != nil {
					return nil, err
				}
				if !ok {
					return nil, apperr.Invalidf("%s: transfer_config.team_id is not a team of this organization", where)
				}
			}
		case "api_fetch":
			if st.APIConfig == nil || s.checkURL(st.APIConfig.URL) != nil {
				return nil, apperr.Invalidf("%s: an api_fetch step needs api_config.url, an http(s) URL the service may call", where)
			}
			m := strings.ToUpper(st.APIConfig.Method)
			if m == "" {
				m = "GET"
			}
			if !slices.Contains([]string{"GET", "POST"}, m) {
				return nil, apperr.Invalidf("%s: api_config.method must be GET or POST", where)
			}
			st.APIConfig.Method = m
			if b := strings.TrimSpace(st.APIConfig.Body); b != "" && !json.Valid([]byte(fillJSON(b, func(string) string { return "" }))) {
				return nil, apperr.Invalidf("%s: api_config.body must be JSON; a {{placeholder}} stands inside a string or for a value, and is sent as a string", where)
			}
			for v := range st.APIConfig.ResponseMapping {
				if !variableName.MatchString(v) {
					return nil, apperr.Invalidf("%s: api_config.response_mapping keys must be variable names", where)
				}
			}
		case "platform_flow":
			if st.FlowConfig == nil || strings.TrimSpace(st.FlowConfig.FlowID) == "" || strings.TrimSpace(st.FlowConfig.FlowCTA) == "" ||
				len([]rune(st.FlowConfig.FlowCTA)) > MaxButtonTitle {
				return nil, apperr.Invalidf("%s: a platform_flow step needs flow_config.flow_id and flow_config.flow_cta (at most %d characters)", where, MaxButtonTitle)
			}
			if st.Message == "" {
				return nil, apperr.Invalidf("%s: a platform_flow step needs a message (the flow message's body)", where)
			}
		}
		out[i] = st
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].StepOrder < out[b].StepOrder })
	return out, nil
}
