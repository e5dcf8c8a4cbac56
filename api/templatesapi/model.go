package templatesapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/templates"
	"wharf/models"
)

type listQuery struct {
	web.PageQuery
	Status    string `query:"status" description:"Only templates with this status (APPROVED, PENDING, REJECTED...)."`
	Category  string `query:"category" description:"Only templates of this category (MARKETING, UTILITY, AUTHENTICATION)."`
	Search    string `query:"search" description:"Text to look for in the template name."`
	AccountID string `query:"account_id" description:"Only templates of this platform account (UUID)."`
}

type templateResp struct {
	ID                 uuid.UUID        `json:"id"`
	AccountID          uuid.UUID        `json:"account_id"`
	ProviderTemplateID string           `json:"provider_template_id"`
	Name               string           `json:"name"`
	Language           string           `json:"language"`
	Status             string           `json:"status"`
	Category           string           `json:"category"`
	ParameterFormat    string           `json:"parameter_format"`
	Components         []map[string]any `json:"components"`
	SampleValues       []map[string]any `json:"sample_values"`
	RejectedReason     string           `json:"rejected_reason"`
	// Parameters are the values a send needs, in component order: the keys
	// of template_params and of a campaign's variable_mapping.
	Parameters []templateParam `json:"parameters"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
}

// templateParam is one value a send of the template needs.
type templateParam struct {
	Key       string `json:"key" description:"The key in template_params and variable_mapping: 1, 2... or the name (body), header_1 or the name (header text), header_media_url, button_<i>."`
	Component string `json:"component" description:"header, body or button"`
	Name      string `json:"name" description:"The placeholder as written in the text ({{name}}); empty for a media header or a button."`
	Media     string `json:"media,omitempty" description:"IMAGE, VIDEO or DOCUMENT for a media header."`
}

func toTemplateResp(t *models.Template) templateResp {
	r := templateResp{ID: t.ID, AccountID: t.AccountID, ProviderTemplateID: t.ProviderTemplateID, Name: t.Name, Language: t.Language,
		Status: t.Status, Category: t.Category, ParameterFormat: t.ParameterFormat, Components: t.Components.V,
		SampleValues: t.SampleValues.V, RejectedReason: t.RejectedReason, CreatedAt: web.UTC(t.CreatedAt), UpdatedAt: web.UTC(t.UpdatedAt)}
	if r.Components == nil {
		r.Components = []map[string]any{}
	}
	slots := templates.Slots(t)
	r.Parameters = make([]templateParam, len(slots))
	for i, sl := range slots {
		r.Parameters[i] = templateParam{Key: sl.Key, Component: sl.Component, Name: sl.Name, Media: sl.Media}
	}
	if r.SampleValues == nil {
		r.SampleValues = []map[string]any{}
	}
	return r
}

type createRequest struct {
	AccountID       *string                 `json:"account_id"`
	Name            string                  `json:"name"`
	Language        string                  `json:"language"`
	Category        string                  `json:"category"`
	ParameterFormat string                  `json:"parameter_format"`
	Components      []map[string]any        `json:"components"`
	SampleValues    []templates.SampleValue `json:"sample_values"`
}

type updateRequest struct {
	Components   []map[string]any         `json:"components"`
	SampleValues *[]templates.SampleValue `json:"sample_values"`
}

type publishedResp struct {
	ID     uuid.UUID `json:"id"`
	Status string    `json:"status"`
}

type syncRequest struct {
	AccountID *string `json:"account_id"`
}

// syncResp counts a finished sync (200).
type syncResp struct {
	Synced  int `json:"synced"`  // templates the provider returned
	New     int `json:"new"`     // created here
	Updated int `json:"updated"` // changed here
}

// syncQueuedResp is the 202 of a sync that is still running.
type syncQueuedResp struct {
	Status string `json:"status"` // queued
	TaskID string `json:"task_id"`
}
