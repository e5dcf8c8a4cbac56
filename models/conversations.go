package models

import (
	"time"

	"github.com/google/uuid"
)

// Team is a group of agents that transfers can be routed to.
type Team struct {
	ID                 uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID     uuid.UUID `gorm:"type:uuid"`
	Name               string
	Description        string
	AssignmentStrategy string // round_robin, load_balanced, manual
	IsActive           bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// Team member roles.
const (
	TeamRoleManager = "manager"
	TeamRoleAgent   = "agent"
)

// TeamMember is a member of the organization in a team.
type TeamMember struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	TeamID         uuid.UUID `gorm:"type:uuid"`
	UserID         uuid.UUID `gorm:"type:uuid"`
	Role           string
	LastAssignedAt *time.Time
	CreatedAt      time.Time
}

// CannedResponse is a saved reply agents insert into a conversation.
type CannedResponse struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Name           string
	Shortcut       string
	Content        string
	Category       string
	IsActive       bool
	UsageCount     int64
	CreatedBy      *uuid.UUID `gorm:"type:uuid"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Agent transfer statuses.
const (
	TransferActive  = "active"
	TransferResumed = "resumed"
)

// AgentTransfer hands a contact's conversation from the bot to a person:
// waiting in a queue (the general one when TeamID is nil) until an agent
// is assigned, active until resumed.
type AgentTransfer struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	ContactID      uuid.UUID `gorm:"type:uuid"`
	Status         string
	Source         string
	TeamID         *uuid.UUID `gorm:"type:uuid"`
	AgentID        *uuid.UUID `gorm:"type:uuid"`
	Notes          string
	CreatedBy      *uuid.UUID `gorm:"type:uuid"`
	TransferredAt  time.Time
	AssignedAt     *time.Time
	ResumedAt      *time.Time
	ResumedBy      *uuid.UUID `gorm:"type:uuid"`
	UpdatedAt      time.Time
}

// ChatButton is a reply button the chatbot offers; its id is generated.
type ChatButton struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// BusinessHours are the hours of one weekday (0 Sunday ... 6 Saturday), in
// the organization's timezone, "HH:MM" to "HH:MM".
type BusinessHours struct {
	Day   int    `json:"day"`
	Open  string `json:"open"`
	Close string `json:"close"`
}

// ChatbotSettings is an organization's chatbot configuration.
type ChatbotSettings struct {
	OrganizationID        uuid.UUID `gorm:"type:uuid;primaryKey"`
	ChatbotEnabled        bool
	AIEnabled             bool    `gorm:"column:ai_enabled"`
	AIProvider            string  `gorm:"column:ai_provider"`
	AIModel               string  `gorm:"column:ai_model"`
	AITemperature         float64 `gorm:"column:ai_temperature"`
	AIMaxTokens           int     `gorm:"column:ai_max_tokens"`
	AIAPIKeyEnc           []byte  `gorm:"column:ai_api_key_enc"`
	AIBaseURL             string  `gorm:"column:ai_base_url"`
	AIHistoryMessages     int     `gorm:"column:ai_history_messages"`
	SystemPrompt          string
	GreetingMessage       string
	GreetingButtons       JSON[[]ChatButton] `gorm:"type:jsonb"`
	GreetingListButton    string
	FallbackMessage       string
	FallbackButtons       JSON[[]ChatButton] `gorm:"type:jsonb"`
	FallbackListButton    string
	TransferKeywords      JSON[[]string] `gorm:"type:jsonb"`
	TransferMessage       string
	BusinessHoursEnabled  bool
	BusinessHours         JSON[[]BusinessHours] `gorm:"type:jsonb"`
	OutOfHoursMessage     string
	SessionTimeoutMinutes int
	UpdatedAt             time.Time
}

// TableName implements gorm's tabler.
func (ChatbotSettings) TableName() string { return "chatbot_settings" }

// KeywordRule answers messages matching its keywords.
type KeywordRule struct {
	ID             uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID `gorm:"type:uuid"`
	Name           string
	Keywords       JSON[[]string] `gorm:"type:jsonb"`
	MatchType      string
	ResponseType   string
	Response       string
	Priority       int
	Enabled        bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// TableName implements gorm's tabler.
func (KeywordRule) TableName() string { return "chatbot_keyword_rules" }

// AIContext is text given to the AI when its trigger keywords match.
type AIContext struct {
	ID              uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID  uuid.UUID `gorm:"type:uuid"`
	Name            string
	TriggerKeywords JSON[[]string] `gorm:"type:jsonb"`
	ContextType     string         // static or api
	Content         string         // the text, or the URL of an api context
	Priority        int
	Enabled         bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// TableName implements gorm's tabler.
func (AIContext) TableName() string { return "chatbot_ai_contexts" }

// FlowStep is one step of a conversation flow.
type FlowStep struct {
	StepName       string          `json:"step_name"`
	StepOrder      int             `json:"step_order"`
	Message        string          `json:"message"`
	MessageType    string          `json:"message_type"` // text, buttons, api_fetch, platform_flow, transfer
	InputType      string          `json:"input_type"`   // select, text, or "" (no answer awaited)
	Buttons        []ChatButton    `json:"buttons"`
	StoreAs        string          `json:"store_as"`
	TransferConfig *TransferConfig `json:"transfer_config,omitempty"`
	APIConfig      *APIConfig      `json:"api_config,omitempty"`
	FlowConfig     *FlowConfig     `json:"flow_config,omitempty"`
}

// TransferConfig is where a transfer step hands the contact.
type TransferConfig struct {
	TeamID *uuid.UUID `json:"team_id,omitempty"`
	Notes  string     `json:"notes"`
}

// APIConfig is what an api_fetch step calls and keeps of the answer:
// response_mapping maps a session variable to a top-level (or dotted)
// field of the JSON answer.
type APIConfig struct {
	URL             string            `json:"url"`
	Method          string            `json:"method"`
	Headers         map[string]string `json:"headers,omitempty"`
	Body            string            `json:"body,omitempty"`
	ResponseMapping map[string]string `json:"response_mapping,omitempty"`
}

// FlowConfig is the platform-native flow a platform_flow step sends.
type FlowConfig struct {
	FlowID     string `json:"flow_id"`
	FlowCTA    string `json:"flow_cta"`
	FlowAction string `json:"flow_action,omitempty"`
	Screen     string `json:"screen,omitempty"`
}

// ChatbotFlow is a conversation flow.
type ChatbotFlow struct {
	ID                uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID    uuid.UUID `gorm:"type:uuid"`
	Name              string
	TriggerKeywords   JSON[[]string] `gorm:"type:jsonb"`
	InitialMessage    string
	CompletionMessage string
	Enabled           bool
	PanelConfig       JSON[map[string]any] `gorm:"type:jsonb"`
	Steps             JSON[[]FlowStep]     `gorm:"type:jsonb"`
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// TableName implements gorm's tabler.
func (ChatbotFlow) TableName() string { return "chatbot_flows" }

// ChatbotSession is a contact's walk through a flow.
type ChatbotSession struct {
	ID             uuid.UUID  `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID uuid.UUID  `gorm:"type:uuid"`
	ContactID      uuid.UUID  `gorm:"type:uuid"`
	FlowID         *uuid.UUID `gorm:"type:uuid"`
	FlowName       string
	CurrentStep    int
	Variables      JSON[map[string]any] `gorm:"type:jsonb"`
	PanelConfig    JSON[map[string]any] `gorm:"type:jsonb"`
	StartedAt      time.Time
	LastActivity   time.Time
	EndedAt        *time.Time
	EndReason      string
}

// TableName implements gorm's tabler.
func (ChatbotSession) TableName() string { return "chatbot_sessions" }
