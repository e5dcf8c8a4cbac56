package chatbot

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/ai"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/models"
)

// AI providers the chatbot can call: OpenAI and any server speaking its
// API (vLLM, Ollama, LM Studio: set ai_base_url), and Anthropic.
var AIProviders = []string{"openai", "anthropic"}

// Button limits: 1 to 3 buttons are quick-reply buttons, 4 to 10 a list.
const (
	MaxButtons      = 10
	MaxQuickReplies = 3
	MaxButtonTitle  = 20
	maxText         = 4096
	// defaultListButton labels a list menu whose label is not set.
	defaultListButton = "Choose an option"
)

// defaults are the settings of an organization that never saved any.
func defaults(orgID uuid.UUID) models.ChatbotSettings {
	return models.ChatbotSettings{OrganizationID: orgID, AIProvider: "openai", AITemperature: 0.7, AIMaxTokens: 500,
		AIHistoryMessages: 10, SessionTimeoutMinutes: 30}
}

// Settings answers the organization's chatbot settings (the defaults when
// none were saved).
func (s *Service) Settings(ctx context.Context, orgID uuid.UUID) (*models.ChatbotSettings, error) {
	return s.settingsIn(ctx, s.db, orgID)
}

// settingsIn reads the settings in db (an evaluation's transaction): they
// are read on every evaluation, so a change applies to the very next
// message.
func (s *Service) settingsIn(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (*models.ChatbotSettings, error) {
	st := defaults(orgID)
	err := db.WithContext(ctx).Take(&st, "organization_id = ?", orgID).Error
	if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, err
	}
	normalize(&st)
	return &st, nil
}

func normalize(st *models.ChatbotSettings) {
	if st.GreetingButtons.V == nil {
		st.GreetingButtons.V = []models.ChatButton{}
	}
	if st.FallbackButtons.V == nil {
		st.FallbackButtons.V = []models.ChatButton{}
	}
	if st.TransferKeywords.V == nil {
		st.TransferKeywords.V = []string{}
	}
	if st.BusinessHours.V == nil {
		st.BusinessHours.V = []models.BusinessHours{}
	}
}

// SettingsInput changes the fields given.
type SettingsInput struct {
	ChatbotEnabled        *bool
	AIEnabled             *bool
	AIProvider            *string
	AIModel               *string
	AITemperature         *float64
	AIMaxTokens           *int
	AIAPIKey              *string // write-only; "" keeps the stored key (unless AIProvider or AIBaseURL changes), use ClearAIAPIKey to remove it
	ClearAIAPIKey         bool
	AIBaseURL             *string
	AIHistoryMessages     *int
	SystemPrompt          *string
	GreetingMessage       *string
	GreetingButtons       *[]models.ChatButton
	GreetingListButton    *string
	FallbackMessage       *string
	FallbackButtons       *[]models.ChatButton
	FallbackListButton    *string
	TransferKeywords      *[]string
	TransferMessage       *string
	BusinessHoursEnabled  *bool
	BusinessHours         *[]models.BusinessHours
	OutOfHoursMessage     *string
	SessionTimeoutMinutes *int
}

// UpdateSettings validates and saves the fields given.
func (s *Service) UpdateSettings(ctx context.Context, orgID uuid.UUID, in SettingsInput) (*models.ChatbotSettings, error) {
	st, err := s.Settings(ctx, orgID)
	if err != nil {
		return nil, err
	}
	keyProvider, keyBaseURL := st.AIProvider, st.AIBaseURL
	setB := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	setB(&st.ChatbotEnabled, in.ChatbotEnabled)
	setB(&st.AIEnabled, in.AIEnabled)
	setB(&st.BusinessHoursEnabled, in.BusinessHoursEnabled)
	texts := []struct {
		name string
		dst  *string
		v    *string
	}{{"system_prompt", &st.SystemPrompt, in.SystemPrompt}, {"greeting_message", &st.GreetingMessage, in.GreetingMessage},
		{"fallback_message", &st.FallbackMessage, in.FallbackMessage}, {"transfer_message", &st.TransferMessage, in.TransferMessage},
		{"out_of_hours_message", &st.OutOfHoursMessage, in.OutOfHoursMessage}, {"ai_model", &st.AIModel, in.AIModel}}
	for _, t := range texts {
		if t.v == nil {
			continue
		}
		*t.dst = strings.TrimSpace(*t.v)
		if len([]rune(*t.dst)) > maxText {
			return nil, apperr.Invalidf("%s is longer than %d characters", t.name, maxText)
		}
	}
	if in.AIProvider != nil {
		p := strings.ToLower(strings.TrimSpace(*in.AIProvider))
		if !slices.Contains(AIProviders, p) {
			return nil, apperr.Invalidf("ai_provider must be one of %s", strings.Join(AIProviders, ", "))
		}
		st.AIProvider = p
	}
	if in.AITemperature != nil {
		if *in.AITemperature < 0 || *in.AITemperature > 2 {
			return nil, apperr.Invalidf("ai_temperature must be between 0 and 2")
		}
		st.AITemperature = *in.AITemperature
	}
	ints := []struct {
		name     string
		dst      *int
		v        *int
		min, max int
	}{{"ai_max_tokens", &st.AIMaxTokens, in.AIMaxTokens, 1, 8192}, {"ai_history_messages", &st.AIHistoryMessages, in.AIHistoryMessages, 0, 50},
		{"session_timeout_minutes", &st.SessionTimeoutMinutes, in.SessionTimeoutMinutes, 1, 7 * 24 * 60}}
	for _, n := range ints {
		if n.v == nil {
			continue
		}
		if *n.v < n.min || *n.v > n.max {
			return nil, apperr.Invalidf("%s must be between %d and %d", n.name, n.min, n.max)
		}
		*n.dst = *n.v
	}
	if in.AIBaseURL != nil {
		u := strings.TrimSpace(*in.AIBaseURL)
		if u != "" {
			if err := ai.ValidateBaseURL(s.policy, u); err != nil {
				return nil, apperr.Invalidf("ai_base_url: %s", safehttp.Public(err))
			}
		}
		st.AIBaseURL = u
	}
	// The key goes only to the provider and base URL it was given with
	// (aikey.go): a new key is bound to this request's result, and a change
	// of either without a new key drops the stored one (has_ai_api_key
	// turns false in the answer).
	switch {
	case in.ClearAIAPIKey:
		st.AIAPIKeyEnc = nil
	case in.AIAPIKey != nil && strings.TrimSpace(*in.AIAPIKey) != "":
		if st.AIAPIKeyEnc, err = s.sealAIKey(strings.TrimSpace(*in.AIAPIKey), st.AIProvider, st.AIBaseURL); err != nil {
			return nil, err
		}
	case st.AIProvider != keyProvider || st.AIBaseURL != keyBaseURL:
		st.AIAPIKeyEnc = nil
	}
	for _, b := range []struct {
		name    string
		dst     *[]models.ChatButton
		v       *[]models.ChatButton
		listDst *string
		listV   *string
	}{{"greeting_buttons", &st.GreetingButtons.V, in.GreetingButtons, &st.GreetingListButton, in.GreetingListButton},
		{"fallback_buttons", &st.FallbackButtons.V, in.FallbackButtons, &st.FallbackListButton, in.FallbackListButton}} {
		if b.v != nil {
			buttons, err := Buttons(b.name, *b.v, 0)
			if err != nil {
				return nil, err
			}
			*b.dst = buttons
		}
		if b.listV != nil {
			*b.listDst = strings.TrimSpace(*b.listV)
			if len([]rune(*b.listDst)) > MaxButtonTitle {
				return nil, apperr.Invalidf("%s list button is longer than %d characters", b.name, MaxButtonTitle)
			}
		}
	}
	if in.TransferKeywords != nil {
		kw, err := keywords("transfer_keywords", *in.TransferKeywords, false)
		if err != nil {
			return nil, err
		}
		st.TransferKeywords.V = kw
	}
	if in.BusinessHours != nil {
		if err := validHours(*in.BusinessHours); err != nil {
			return nil, err
		}
		st.BusinessHours.V = *in.BusinessHours
	}
	st.UpdatedAt = s.now()
	normalize(st)
	if err := s.db.WithContext(ctx).Save(st).Error; err != nil {
		return nil, err
	}
	return st, nil
}

// Buttons validates reply buttons (1 to 10 when min is 1, else 0 to 10),
// titles of 1 to 20 characters, unique case-insensitively, and gives each
// an id (kept when it has one).
func Buttons(field string, in []models.ChatButton, min int) ([]models.ChatButton, error) {
	if len(in) > MaxButtons {
		return nil, apperr.Invalidf("%s must have at most %d buttons", field, MaxButtons)
	}
	if len(in) < min {
		return nil, apperr.Invalidf("%s must have %d to %d buttons", field, min, MaxButtons)
	}
	out := make([]models.ChatButton, len(in))
	seen := map[string]bool{}
	for i, b := range in {
		title := strings.TrimSpace(b.Title)
		if title == "" || len([]rune(title)) > MaxButtonTitle {
			return nil, apperr.Invalidf("%s: button %d needs a title of at most %d characters", field, i+1, MaxButtonTitle)
		}
		if seen[strings.ToLower(title)] {
			return nil, apperr.Invalidf("%s: button titles must differ (%q twice)", field, title)
		}
		seen[strings.ToLower(title)] = true
		id := strings.TrimSpace(b.ID)
		if id == "" || len(id) > 200 {
			id = "btn_" + uuid.NewString()[:8]
		}
		out[i] = models.ChatButton{ID: id, Title: title}
	}
	return out, nil
}

// keywords trims, drops empty and duplicate keywords, and (when required)
// wants at least one.
func keywords(field string, in []string, required bool) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, k := range in {
		k = strings.TrimSpace(k)
		if k == "" || seen[strings.ToLower(k)] {
			continue
		}
		if len([]rune(k)) > 200 {
			return nil, apperr.Invalidf("%s: a keyword is longer than 200 characters", field)
		}
		seen[strings.ToLower(k)] = true
		out = append(out, k)
	}
	if required && len(out) == 0 {
		return nil, apperr.Invalidf("%s must have at least one keyword", field)
	}
	if len(out) > 100 {
		return nil, apperr.Invalidf("%s has more than 100 keywords", field)
	}
	return out, nil
}

var hhmm = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// validHours checks business hours: days 0 (Sunday) to 6, "HH:MM" times
// with open before close.
func validHours(hours []models.BusinessHours) error {
	for i, h := range hours {
		if h.Day < 0 || h.Day > 6 {
			return apperr.Invalidf("business_hours[%d].day must be 0 (Sunday) to 6 (Saturday)", i)
		}
		if !hhmm.MatchString(h.Open) || !hhmm.MatchString(h.Close) || h.Open >= h.Close {
			return apperr.Invalidf("business_hours[%d]: open and close must be HH:MM with open before close", i)
		}
	}
	return nil
}
