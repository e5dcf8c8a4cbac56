package pflowsapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/models"
	"wharf/platform"
)

type listQuery struct {
	web.PageQuery
	Status    string `query:"status" description:"Only flows with this status (DRAFT, PUBLISHED, DEPRECATED; BLOCKED and THROTTLED come from the provider)."`
	AccountID string `query:"account_id" description:"Only flows of this platform account (UUID)."`
}

// flowSummary is a flow in a list: everything but its definition.
type flowSummary struct {
	ID               uuid.UUID        `json:"id"`
	ProviderFlowID   *string          `json:"provider_flow_id"`
	Name             string           `json:"name"`
	Status           string           `json:"status"`
	AccountID        uuid.UUID        `json:"account_id"`
	Categories       []string         `json:"categories"`
	ValidationErrors []map[string]any `json:"validation_errors"`
	// NeedsSave tells that the flow changed here since it was last saved
	// to the provider.
	NeedsSave bool       `json:"needs_save"`
	SavedAt   *time.Time `json:"saved_at"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// flowResp is one flow with its definition.
type flowResp struct {
	flowSummary
	JSONDefinition map[string]any `json:"json_definition"`
}

func toSummary(f *models.PlatformFlow) flowSummary {
	r := flowSummary{ID: f.ID, ProviderFlowID: f.ProviderFlowID, Name: f.Name, Status: f.Status, AccountID: f.AccountID,
		Categories: f.Categories.V, ValidationErrors: f.ValidationErrors.V, NeedsSave: f.NeedsSave, SavedAt: web.UTCPtr(f.SavedAt),
		CreatedAt: web.UTC(f.CreatedAt), UpdatedAt: web.UTC(f.UpdatedAt)}
	if r.Categories == nil {
		r.Categories = []string{}
	}
	if r.ValidationErrors == nil {
		r.ValidationErrors = []map[string]any{}
	}
	return r
}

func toFlowResp(f *models.PlatformFlow) flowResp {
	r := flowResp{flowSummary: toSummary(f), JSONDefinition: f.JSONDefinition.V}
	if r.JSONDefinition == nil {
		r.JSONDefinition = map[string]any{}
	}
	return r
}

type createRequest struct {
	AccountID      *string        `json:"account_id"`
	Name           *string        `json:"name"`
	Categories     *[]string      `json:"categories"`
	JSONDefinition map[string]any `json:"json_definition"`
}

// updateRequest changes a DRAFT flow; absent fields are unchanged.
type updateRequest struct {
	Name           *string        `json:"name"`
	Categories     *[]string      `json:"categories"`
	JSONDefinition map[string]any `json:"json_definition"`
}

type savedResp struct {
	ProviderFlowID   string                         `json:"provider_flow_id"`
	ValidationErrors []platform.FlowValidationError `json:"validation_errors"`
	Status           string                         `json:"status"`
}

type statusResp struct {
	ID     uuid.UUID `json:"id"`
	Status string    `json:"status"`
}

// sendRequest sends a flow message; screen defaults to the flow's first
// screen, flow_token to a new UUID (the contact's flow reply carries it).
type sendRequest struct {
	ContactID string         `json:"contact_id"`
	Body      string         `json:"body"`
	CTA       string         `json:"cta"`
	Header    string         `json:"header"`
	Footer    string         `json:"footer"`
	Screen    string         `json:"screen"`
	Data      map[string]any `json:"data"`
	FlowToken string         `json:"flow_token"`
}

type sentResp struct {
	ID                uuid.UUID `json:"id"`
	PlatformMessageID string    `json:"platform_message_id"`
	Status            string    `json:"status"`
}

type syncRequest struct {
	AccountID string `json:"account_id"`
}

type syncResp struct {
	Synced  int `json:"synced"`
	New     int `json:"new"`
	Updated int `json:"updated"`
}
