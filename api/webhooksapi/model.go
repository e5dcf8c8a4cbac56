package webhooksapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/webhooks"
)

// webhookRequest converts to webhooks.Input field for field; nil fields are
// unchanged.
type webhookRequest struct {
	Name     *string            `json:"name"`
	URL      *string            `json:"url"`
	Events   *[]string          `json:"events"`
	Headers  *map[string]string `json:"headers"`
	Secret   *string            `json:"secret"`
	IsActive *bool              `json:"is_active"`
}

type webhookResp struct {
	ID        uuid.UUID         `json:"id"`
	Name      string            `json:"name"`
	URL       string            `json:"url"`
	Events    []string          `json:"events"`
	Headers   map[string]string `json:"headers"`
	HasSecret bool              `json:"has_secret"`
	IsActive  bool              `json:"is_active"`
	CreatedAt time.Time         `json:"created_at"`
	UpdatedAt time.Time         `json:"updated_at"`
}

func toWebhookResp(v webhooks.View) webhookResp {
	v = webhooks.Masked(v)
	return webhookResp{ID: v.ID, Name: v.Name, URL: v.URL, Events: v.Events.V, Headers: v.Headers.V, HasSecret: v.HasSecret,
		IsActive: v.IsActive, CreatedAt: web.UTC(v.CreatedAt), UpdatedAt: web.UTC(v.UpdatedAt)}
}

type webhooksResp struct {
	Items           []webhookResp        `json:"items"`
	AvailableEvents []webhooks.EventInfo `json:"available_events"`
}

type testResp struct {
	Success    bool   `json:"success"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

type deliveryResp struct {
	ID         int64      `json:"id"`
	Event      string     `json:"event"`
	EventID    *uuid.UUID `json:"event_id"`
	Attempt    int        `json:"attempt"`
	Success    bool       `json:"success"`
	StatusCode int        `json:"status_code"`
	Error      string     `json:"error"`
	DurationMS int        `json:"duration_ms"`
	CreatedAt  time.Time  `json:"created_at"`
}
