package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/webhooks"
	"wharf/platform"
)

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
	return webhookResp{ID: v.ID, Name: v.Name, URL: v.URL, Events: v.Events.V, Headers: v.Headers.V, HasSecret: v.HasSecret,
		IsActive: v.IsActive, CreatedAt: utc(v.CreatedAt), UpdatedAt: utc(v.UpdatedAt)}
}

func (s *Server) listWebhooks(c *gin.Context) {
	rows, err := s.Webhooks.List(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]webhookResp, len(rows))
	for i, v := range rows {
		items[i] = toWebhookResp(v)
	}
	ok(c, http.StatusOK, gin.H{"items": items, "available_events": webhooks.Catalog})
}

type webhookReq struct {
	Name     *string            `json:"name"`
	URL      *string            `json:"url"`
	Events   *[]string          `json:"events"`
	Headers  *map[string]string `json:"headers"`
	Secret   *string            `json:"secret"`
	IsActive *bool              `json:"is_active"`
}

func (s *Server) createWebhook(c *gin.Context) {
	var req webhookReq
	if !s.bindJSON(c, &req) {
		return
	}
	v, err := s.Webhooks.Create(c.Request.Context(), principal(c).OrgID, webhooks.Input(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, toWebhookResp(*v))
}

func (s *Server) getWebhook(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	v, err := s.Webhooks.Get(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toWebhookResp(*v))
}

func (s *Server) updateWebhook(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req webhookReq
	if !s.bindJSON(c, &req) {
		return
	}
	v, err := s.Webhooks.Update(c.Request.Context(), principal(c).OrgID, id, webhooks.Input(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toWebhookResp(*v))
}

func (s *Server) deleteWebhook(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.Webhooks.Delete(c.Request.Context(), principal(c).OrgID, id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "webhook deleted")
}

func (s *Server) testWebhook(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	r, err := s.Webhooks.Test(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"success": r.Success, "status_code": r.StatusCode, "error": r.Error,
		"duration_ms": r.Duration.Milliseconds()})
}

func (s *Server) webhookDeliveries(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	rows, err := s.Webhooks.Deliveries(c.Request.Context(), principal(c).OrgID, id, 50)
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]gin.H, len(rows))
	for i, d := range rows {
		items[i] = gin.H{"id": d.ID, "event": d.Event, "event_id": d.EventID, "attempt": d.Attempt, "success": d.Success,
			"status_code": d.StatusCode, "error": d.Error, "duration_ms": d.DurationMS, "created_at": utc(d.CreatedAt)}
	}
	ok(c, http.StatusOK, gin.H{"items": items})
}

// verifyInbound answers the provider's subscription handshake in plain text.
func (s *Server) verifyInbound(c *gin.Context) {
	challenge, err := s.Inbound.Verify(c.Request.Context(), c.Query("hub.mode"), c.Query("hub.verify_token"), c.Query("hub.challenge"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(challenge))
}

// receiveInbound verifies, stores and acknowledges a provider webhook;
// processing happens in the worker. The domain reads the body only once the
// client address has passed its failure limit.
func (s *Server) receiveInbound(c *gin.Context) {
	n, err := s.Inbound.Intake(c.Request.Context(), c.ClientIP(), c.GetHeader(platform.SignatureHeader), c.Request.Body)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"received": n})
}
