package webhooksapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/webhooks"
	"wharf/models"
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
	Redelivery bool       `json:"redelivery" description:"A person asked for this attempt (POST .../redeliver)."`
	// The bodies carry the event's data (contacts' numbers, message texts):
	// they are shown only to callers who may read contacts and messages.
	RequestBody  *string   `json:"request_body" description:"The JSON sent (at most 16 KB kept); null when the caller lacks contacts:read or messages:read."`
	ResponseBody *string   `json:"response_body" description:"The start of the endpoint's answer (at most 4 KB kept); null when the caller lacks contacts:read or messages:read."`
	CreatedAt    time.Time `json:"created_at"`
}

// toDeliveryResp is a log row as the caller may see it.
func toDeliveryResp(d *models.WebhookDelivery, bodies bool) deliveryResp {
	r := deliveryResp{ID: d.ID, Event: d.Event, EventID: d.EventID, Attempt: d.Attempt, Success: d.Success,
		StatusCode: d.StatusCode, Error: d.Error, DurationMS: d.DurationMS, Redelivery: d.Redelivery, CreatedAt: web.UTC(d.CreatedAt)}
	if bodies {
		r.RequestBody, r.ResponseBody = &d.RequestBody, &d.ResponseBody
	}
	return r
}
