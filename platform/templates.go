package platform

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
)

// TemplateDefinition is a template as the provider stores it. Components
// are kept as raw JSON: the service stores and returns them as given.
type TemplateDefinition struct {
	ID              string          `json:"id,omitempty"`
	Name            string          `json:"name"`
	Language        string          `json:"language"`
	Category        string          `json:"category"`
	Status          string          `json:"status,omitempty"`
	ParameterFormat string          `json:"parameter_format,omitempty"` // NAMED or POSITIONAL
	Components      json.RawMessage `json:"components"`
	RejectedReason  string          `json:"rejected_reason,omitempty"`
}

// TemplateCreated is the provider's answer to a template submission.
type TemplateCreated struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Category string `json:"category"`
}

// CreateTemplate submits a template for approval.
func (c *Client) CreateTemplate(ctx context.Context, cr Creds, t TemplateDefinition) (*TemplateCreated, error) {
	var out TemplateCreated
	return &out, c.postJSON(ctx, cr.AccessToken, cr.BusinessAccountID+"/message_templates", t, &out)
}

// TemplatePage is one page of the template list.
type TemplatePage struct {
	Data   []TemplateDefinition `json:"data"`
	Paging struct {
		Cursors struct {
			Before string `json:"before"`
			After  string `json:"after"`
		} `json:"cursors"`
		Next string `json:"next"`
	} `json:"paging"`
}

// ListTemplates returns one page of templates after the cursor.
func (c *Client) ListTemplates(ctx context.Context, cr Creds, after string, limit int) (*TemplatePage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)},
		"fields": {"id,name,language,category,status,components,parameter_format,rejected_reason"}}
	if after != "" {
		q.Set("after", after)
	}
	var out TemplatePage
	return &out, c.getJSON(ctx, cr.AccessToken, cr.BusinessAccountID+"/message_templates", q, &out)
}

// AllTemplates follows the paging to the end.
func (c *Client) AllTemplates(ctx context.Context, cr Creds) ([]TemplateDefinition, error) {
	var all []TemplateDefinition
	after := ""
	for {
		page, err := c.ListTemplates(ctx, cr, after, 100)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if page.Paging.Next == "" || page.Paging.Cursors.After == "" || len(page.Data) == 0 {
			return all, nil
		}
		after = page.Paging.Cursors.After
	}
}

// DeleteTemplate deletes a template by name, or one language of it by id.
func (c *Client) DeleteTemplate(ctx context.Context, cr Creds, name, id string) error {
	q := url.Values{"name": {name}}
	if id != "" {
		q.Set("hsm_id", id)
	}
	return c.delete(ctx, cr.AccessToken, cr.BusinessAccountID+"/message_templates", q)
}

// EditTemplate replaces a submitted template's components (and category),
// sending it back to review.
func (c *Client) EditTemplate(ctx context.Context, cr Creds, templateID string, t TemplateDefinition) error {
	var out successResp
	body := map[string]any{"components": t.Components}
	if t.Category != "" {
		body["category"] = t.Category
	}
	return c.postJSON(ctx, cr.AccessToken, templateID, body, &out)
}
