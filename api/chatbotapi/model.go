package chatbotapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/chatbot"
	"wharf/internal/orgsettings"
	"wharf/models"
)

// settingsRequest converts to chatbot.SettingsInput; nil fields are
// unchanged. ai_api_key is write-only: "" keeps it, clear_ai_api_key
// removes it.
type settingsRequest struct {
	ChatbotEnabled        *bool                   `json:"chatbot_enabled"`
	AIEnabled             *bool                   `json:"ai_enabled"`
	AIProvider            *string                 `json:"ai_provider"`
	AIModel               *string                 `json:"ai_model"`
	AITemperature         *float64                `json:"ai_temperature"`
	AIMaxTokens           *int                    `json:"ai_max_tokens"`
	AIAPIKey              *string                 `json:"ai_api_key"`
	ClearAIAPIKey         bool                    `json:"clear_ai_api_key"`
	AIBaseURL             *string                 `json:"ai_base_url"`
	AIHistoryMessages     *int                    `json:"ai_history_messages"`
	SystemPrompt          *string                 `json:"system_prompt"`
	GreetingMessage       *string                 `json:"greeting_message"`
	GreetingButtons       *[]models.ChatButton    `json:"greeting_buttons"`
	GreetingListButton    *string                 `json:"greeting_list_button"`
	FallbackMessage       *string                 `json:"fallback_message"`
	FallbackButtons       *[]models.ChatButton    `json:"fallback_buttons"`
	FallbackListButton    *string                 `json:"fallback_list_button"`
	TransferKeywords      *[]string               `json:"transfer_keywords"`
	TransferMessage       *string                 `json:"transfer_message"`
	BusinessHoursEnabled  *bool                   `json:"business_hours_enabled"`
	BusinessHours         *[]models.BusinessHours `json:"business_hours"`
	OutOfHoursMessage     *string                 `json:"out_of_hours_message"`
	SessionTimeoutMinutes *int                    `json:"session_timeout_minutes"`
}

type settingsResp struct {
	ID                    uuid.UUID              `json:"id"`
	AccountID             *uuid.UUID             `json:"account_id"`
	ChatbotEnabled        bool                   `json:"chatbot_enabled"`
	AIEnabled             bool                   `json:"ai_enabled"`
	AIProvider            string                 `json:"ai_provider"`
	AIModel               string                 `json:"ai_model"`
	AITemperature         float64                `json:"ai_temperature"`
	AIMaxTokens           int                    `json:"ai_max_tokens"`
	HasAIAPIKey           bool                   `json:"has_ai_api_key"`
	AIBaseURL             string                 `json:"ai_base_url"`
	AIHistoryMessages     int                    `json:"ai_history_messages"`
	SystemPrompt          string                 `json:"system_prompt"`
	GreetingMessage       string                 `json:"greeting_message"`
	GreetingButtons       []models.ChatButton    `json:"greeting_buttons"`
	GreetingListButton    string                 `json:"greeting_list_button"`
	FallbackMessage       string                 `json:"fallback_message"`
	FallbackButtons       []models.ChatButton    `json:"fallback_buttons"`
	FallbackListButton    string                 `json:"fallback_list_button"`
	TransferKeywords      []string               `json:"transfer_keywords"`
	TransferMessage       string                 `json:"transfer_message"`
	BusinessHoursEnabled  bool                   `json:"business_hours_enabled"`
	BusinessHours         []models.BusinessHours `json:"business_hours"`
	OutOfHoursMessage     string                 `json:"out_of_hours_message"`
	SessionTimeoutMinutes int                    `json:"session_timeout_minutes"`
	UpdatedAt             time.Time              `json:"updated_at"`
}

func toSettingsResp(s *models.ChatbotSettings) settingsResp {
	return settingsResp{ID: s.OrganizationID, ChatbotEnabled: s.ChatbotEnabled, AIEnabled: s.AIEnabled, AIProvider: s.AIProvider,
		AIModel: s.AIModel, AITemperature: s.AITemperature, AIMaxTokens: s.AIMaxTokens, HasAIAPIKey: len(s.AIAPIKeyEnc) > 0,
		AIBaseURL: s.AIBaseURL, AIHistoryMessages: s.AIHistoryMessages, SystemPrompt: s.SystemPrompt, GreetingMessage: s.GreetingMessage,
		GreetingButtons: s.GreetingButtons.V, GreetingListButton: s.GreetingListButton, FallbackMessage: s.FallbackMessage,
		FallbackButtons: s.FallbackButtons.V, FallbackListButton: s.FallbackListButton, TransferKeywords: s.TransferKeywords.V,
		TransferMessage: s.TransferMessage, BusinessHoursEnabled: s.BusinessHoursEnabled, BusinessHours: s.BusinessHours.V,
		OutOfHoursMessage: s.OutOfHoursMessage, SessionTimeoutMinutes: s.SessionTimeoutMinutes, UpdatedAt: web.UTC(s.UpdatedAt)}
}

type ruleRequest struct {
	Name         *string   `json:"name"`
	Keywords     *[]string `json:"keywords"`
	MatchType    *string   `json:"match_type"`
	ResponseType *string   `json:"response_type"`
	Response     *string   `json:"response"`
	Priority     *int      `json:"priority"`
	Enabled      *bool     `json:"enabled"`
}

type ruleResp struct {
	ID           uuid.UUID `json:"id"`
	Name         string    `json:"name"`
	Keywords     []string  `json:"keywords"`
	MatchType    string    `json:"match_type"`
	ResponseType string    `json:"response_type"`
	Response     string    `json:"response"`
	Priority     int       `json:"priority"`
	Enabled      bool      `json:"enabled"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

func toRuleResp(r models.KeywordRule) ruleResp {
	return ruleResp{ID: r.ID, Name: r.Name, Keywords: r.Keywords.V, MatchType: r.MatchType, ResponseType: r.ResponseType,
		Response: r.Response, Priority: r.Priority, Enabled: r.Enabled, CreatedAt: web.UTC(r.CreatedAt), UpdatedAt: web.UTC(r.UpdatedAt)}
}

type contextRequest struct {
	Name            *string   `json:"name"`
	TriggerKeywords *[]string `json:"trigger_keywords"`
	ContextType     *string   `json:"context_type"`
	Content         *string   `json:"content"`
	Priority        *int      `json:"priority"`
	Enabled         *bool     `json:"enabled"`
}

type contextResp struct {
	ID              uuid.UUID `json:"id"`
	Name            string    `json:"name"`
	TriggerKeywords []string  `json:"trigger_keywords"`
	ContextType     string    `json:"context_type"`
	Content         string    `json:"content"`
	Priority        int       `json:"priority"`
	Enabled         bool      `json:"enabled"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
}

func toContextResp(c models.AIContext) contextResp {
	return contextResp{ID: c.ID, Name: c.Name, TriggerKeywords: c.TriggerKeywords.V, ContextType: c.ContextType, Content: chatbot.MaskContext(c.ContextType, c.Content),
		Priority: c.Priority, Enabled: c.Enabled, CreatedAt: web.UTC(c.CreatedAt), UpdatedAt: web.UTC(c.UpdatedAt)}
}

type flowRequest struct {
	Name              *string         `json:"name"`
	TriggerKeywords   *[]string       `json:"trigger_keywords"`
	InitialMessage    *string         `json:"initial_message"`
	CompletionMessage *string         `json:"completion_message"`
	Enabled           *bool           `json:"enabled"`
	PanelConfig       *map[string]any `json:"panel_config"`
	Steps             *[]stepRequest  `json:"steps"`
}

type flowResp struct {
	ID                uuid.UUID      `json:"id"`
	Name              string         `json:"name"`
	TriggerKeywords   []string       `json:"trigger_keywords"`
	InitialMessage    string         `json:"initial_message"`
	CompletionMessage string         `json:"completion_message"`
	Enabled           bool           `json:"enabled"`
	PanelConfig       map[string]any `json:"panel_config"`
	Steps             []stepResp     `json:"steps"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
}

func toFlowResp(f models.ChatbotFlow) flowResp {
	return flowResp{ID: f.ID, Name: f.Name, TriggerKeywords: f.TriggerKeywords.V, InitialMessage: f.InitialMessage,
		CompletionMessage: f.CompletionMessage, Enabled: f.Enabled, PanelConfig: f.PanelConfig.V, Steps: toStepResps(chatbot.MaskSteps(f.Steps.V)),
		CreatedAt: web.UTC(f.CreatedAt), UpdatedAt: web.UTC(f.UpdatedAt)}
}

// toFlowInput is the domain's input of a flow request.
func (r flowRequest) toFlowInput() chatbot.FlowInput {
	in := chatbot.FlowInput{Name: r.Name, TriggerKeywords: r.TriggerKeywords, InitialMessage: r.InitialMessage,
		CompletionMessage: r.CompletionMessage, Enabled: r.Enabled, PanelConfig: r.PanelConfig}
	if r.Steps != nil {
		steps := make([]models.FlowStep, len(*r.Steps))
		for i, st := range *r.Steps {
			steps[i] = st.toFlowStep()
		}
		in.Steps = &steps
	}
	return in
}

// The API's flow steps. They are the wire's own types, apart from the
// stored models.FlowStep (whose JSON is the same today), so that storage
// can change without the API and the OpenAPI document names the kinds
// and input types (chatbot.StepKind's enum follows the step registry).

// stepRequest is a step of a flow request. input_type also takes "none"
// (no answer awaited, the same as "").
type stepRequest struct {
	StepName       string              `json:"step_name"`
	StepOrder      int                 `json:"step_order"`
	Message        string              `json:"message"`
	MessageType    chatbot.StepKind    `json:"message_type"`
	InputType      stepInputRequest    `json:"input_type"`
	Buttons        []models.ChatButton `json:"buttons"`
	StoreAs        string              `json:"store_as"`
	TransferConfig *transferConfig     `json:"transfer_config,omitempty"`
	APIConfig      *apiConfig          `json:"api_config,omitempty"`
	FlowConfig     *flowConfig         `json:"flow_config,omitempty"`
}

// stepInputRequest is a request's input_type: chatbot.InputTypes.
type stepInputRequest string

// Enum implements jsonschema-go's Enum (the OpenAPI document's enum).
func (stepInputRequest) Enum() []any {
	out := make([]any, len(chatbot.InputTypes))
	for i, t := range chatbot.InputTypes {
		out[i] = string(t)
	}
	return out
}

// stepResp is a step as the API answers it.
type stepResp struct {
	StepName       string              `json:"step_name"`
	StepOrder      int                 `json:"step_order"`
	Message        string              `json:"message"`
	MessageType    chatbot.StepKind    `json:"message_type"`
	InputType      chatbot.InputType   `json:"input_type"`
	Buttons        []models.ChatButton `json:"buttons"`
	StoreAs        string              `json:"store_as"`
	TransferConfig *transferConfig     `json:"transfer_config,omitempty"`
	APIConfig      *apiConfig          `json:"api_config,omitempty"`
	FlowConfig     *flowConfig         `json:"flow_config,omitempty"`
}

// transferConfig is where a transfer step hands the contact.
type transferConfig struct {
	TeamID *uuid.UUID `json:"team_id,omitempty"`
	Notes  string     `json:"notes"`
}

// apiConfig is what an api_fetch step calls and keeps of the answer.
type apiConfig struct {
	URL             string            `json:"url"`
	Method          string            `json:"method"`
	Headers         map[string]string `json:"headers,omitempty"`
	Body            string            `json:"body,omitempty"`
	ResponseMapping map[string]string `json:"response_mapping,omitempty"`
}

// flowConfig is the platform-native flow a platform_flow step sends.
type flowConfig struct {
	FlowID     string `json:"flow_id"`
	FlowCTA    string `json:"flow_cta"`
	FlowAction string `json:"flow_action,omitempty"`
	Screen     string `json:"screen,omitempty"`
}

func (st stepRequest) toFlowStep() models.FlowStep {
	out := models.FlowStep{StepName: st.StepName, StepOrder: st.StepOrder, Message: st.Message, MessageType: string(st.MessageType),
		InputType: string(st.InputType), Buttons: st.Buttons, StoreAs: st.StoreAs}
	if c := st.TransferConfig; c != nil {
		out.TransferConfig = &models.TransferConfig{TeamID: c.TeamID, Notes: c.Notes}
	}
	if c := st.APIConfig; c != nil {
		out.APIConfig = &models.APIConfig{URL: c.URL, Method: c.Method, Headers: c.Headers, Body: c.Body, ResponseMapping: c.ResponseMapping}
	}
	if c := st.FlowConfig; c != nil {
		out.FlowConfig = &models.FlowConfig{FlowID: c.FlowID, FlowCTA: c.FlowCTA, FlowAction: c.FlowAction, Screen: c.Screen}
	}
	return out
}

func toStepResps(steps []models.FlowStep) []stepResp {
	if steps == nil {
		return nil
	}
	out := make([]stepResp, len(steps))
	for i, st := range steps {
		out[i] = stepResp{StepName: st.StepName, StepOrder: st.StepOrder, Message: st.Message, MessageType: chatbot.StepKind(st.MessageType),
			InputType: chatbot.InputType(st.InputType), Buttons: st.Buttons, StoreAs: st.StoreAs}
		if c := st.TransferConfig; c != nil {
			out[i].TransferConfig = &transferConfig{TeamID: c.TeamID, Notes: c.Notes}
		}
		if c := st.APIConfig; c != nil {
			out[i].APIConfig = &apiConfig{URL: c.URL, Method: c.Method, Headers: c.Headers, Body: c.Body, ResponseMapping: c.ResponseMapping}
		}
		if c := st.FlowConfig; c != nil {
			out[i].FlowConfig = &flowConfig{FlowID: c.FlowID, FlowCTA: c.FlowCTA, FlowAction: c.FlowAction, Screen: c.Screen}
		}
	}
	return out
}

type sessionResp struct {
	ID            uuid.UUID      `json:"id"`
	ContactID     uuid.UUID      `json:"contact_id"`
	ContactName   string         `json:"contact_name"`
	PhoneNumber   string         `json:"phone_number"`
	CurrentFlowID *uuid.UUID     `json:"current_flow_id"`
	FlowName      string         `json:"flow_name"`
	CurrentStep   int            `json:"current_step"`
	Variables     map[string]any `json:"variables"`
	StartedAt     time.Time      `json:"started_at"`
	LastActivity  time.Time      `json:"last_activity"`
	EndedAt       *time.Time     `json:"ended_at"`
	EndReason     string         `json:"end_reason"`
}

func toSessionResp(m orgsettings.Masker, s chatbot.SessionView) sessionResp {
	vars := s.Variables.V
	if vars == nil {
		vars = map[string]any{}
	}
	return sessionResp{ID: s.ID, ContactID: s.ContactID, ContactName: m.Name(s.ContactName), PhoneNumber: m.Phone(s.PhoneNumber),
		CurrentFlowID: s.FlowID, FlowName: s.FlowName, CurrentStep: s.CurrentStep, Variables: vars, StartedAt: web.UTC(s.StartedAt),
		LastActivity: web.UTC(s.LastActivity), EndedAt: web.UTCPtr(s.EndedAt), EndReason: s.EndReason}
}
