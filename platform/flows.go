package platform

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
)

// FlowValidationError is one problem the provider found in a flow's JSON.
type FlowValidationError struct {
	Error       string `json:"error"`
	ErrorType   string `json:"error_type"`
	Message     string `json:"message"`
	LineStart   int    `json:"line_start"`
	LineEnd     int    `json:"line_end"`
	ColumnStart int    `json:"column_start"`
	ColumnEnd   int    `json:"column_end"`
}

// Flow is the provider's view of a flow.
type Flow struct {
	ID               string                `json:"id"`
	Name             string                `json:"name"`
	Status           string                `json:"status"`
	Categories       []string              `json:"categories"`
	ValidationErrors []FlowValidationError `json:"validation_errors"`
}

// CreateFlow creates a DRAFT flow.
func (c *Client) CreateFlow(ctx context.Context, cr Creds, name string, categories []string) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := c.postJSON(ctx, cr.AccessToken, cr.BusinessAccountID+"/flows", map[string]any{"name": name, "categories": categories}, &out)
	return out.ID, err
}

// UploadFlowJSON uploads the flow definition and returns the validation errors.
func (c *Client) UploadFlowJSON(ctx context.Context, cr Creds, flowID string, definition []byte) ([]FlowValidationError, error) {
	var out struct {
		Success          bool                  `json:"success"`
		ValidationErrors []FlowValidationError `json:"validation_errors"`
	}
	fields := map[string]string{"name": "flow.json", "asset_type": "FLOW_JSON"}
	err := c.postMultipart(ctx, cr.AccessToken, flowID+"/assets", fields, "file", "flow.json", "application/json", bytes.NewReader(definition), &out)
	return out.ValidationErrors, err
}

// PublishFlow publishes a flow.
func (c *Client) PublishFlow(ctx context.Context, cr Creds, flowID string) error {
	var out successResp
	return c.postJSON(ctx, cr.AccessToken, flowID+"/publish", struct{}{}, &out)
}

// DeprecateFlow deprecates a published flow.
func (c *Client) DeprecateFlow(ctx context.Context, cr Creds, flowID string) error {
	var out successResp
	return c.postJSON(ctx, cr.AccessToken, flowID+"/deprecate", struct{}{}, &out)
}

// DeleteFlow deletes a draft flow.
func (c *Client) DeleteFlow(ctx context.Context, cr Creds, flowID string) error {
	return c.delete(ctx, cr.AccessToken, flowID, nil)
}

// GetFlow fetches a flow with its validation errors.
func (c *Client) GetFlow(ctx context.Context, cr Creds, flowID string) (*Flow, error) {
	var out Flow
	return &out, c.getJSON(ctx, cr.AccessToken, flowID, url.Values{"fields": {"id,name,status,categories,validation_errors"}}, &out)
}

// ListFlows lists the business account's flows.
func (c *Client) ListFlows(ctx context.Context, cr Creds) ([]Flow, error) {
	var out struct {
		Data []Flow `json:"data"`
	}
	return out.Data, c.getJSON(ctx, cr.AccessToken, cr.BusinessAccountID+"/flows", nil, &out)
}

// UpdateFlow changes a draft flow's name and categories.
func (c *Client) UpdateFlow(ctx context.Context, cr Creds, flowID, name string, categories []string) error {
	var out successResp
	return c.postJSON(ctx, cr.AccessToken, flowID, map[string]any{"name": name, "categories": categories}, &out)
}

// maxFlowJSON bounds a downloaded flow JSON.
const maxFlowJSON = 10 << 20

// FlowJSON downloads a flow's uploaded flow JSON; nil when it has none. The
// provider answers a signed download URL that takes no token.
func (c *Client) FlowJSON(ctx context.Context, cr Creds, flowID string) ([]byte, error) {
	var assets struct {
		Data []struct {
			AssetType   string `json:"asset_type"`
			DownloadURL string `json:"download_url"`
		} `json:"data"`
	}
	if err := c.getJSON(ctx, cr.AccessToken, flowID+"/assets", nil, &assets); err != nil {
		return nil, err
	}
	for _, a := range assets.Data {
		if a.AssetType != "FLOW_JSON" || a.DownloadURL == "" {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.DownloadURL, nil)
		if err != nil {
			return nil, err
		}
		res, err := c.http.Do(req)
		if err != nil {
			return nil, networkError(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(io.LimitReader(res.Body, maxFlowJSON+1))
		if err != nil {
			return nil, networkError(err)
		}
		if res.StatusCode/100 != 2 {
			return nil, parseError(res.StatusCode, res.Header, data)
		}
		if len(data) > maxFlowJSON {
			return nil, &Error{HTTPStatus: res.StatusCode, Message: "the flow JSON is larger than 10 MiB", Class: Permanent}
		}
		return data, nil
	}
	return nil, nil
}
