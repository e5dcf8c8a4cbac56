package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/models"
)

type apiKeyResp struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Key        string     `json:"key,omitempty"`
	KeyPrefix  string     `json:"key_prefix"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	IsActive   bool       `json:"is_active"`
	CreatedAt  time.Time  `json:"created_at"`
}

func toAPIKeyResp(k models.APIKey, now time.Time) apiKeyResp {
	return apiKeyResp{ID: k.ID, Name: k.Name, KeyPrefix: k.KeyPrefix, LastUsedAt: utcPtr(k.LastUsedAt),
		ExpiresAt: utcPtr(k.ExpiresAt), IsActive: k.ExpiresAt == nil || k.ExpiresAt.After(now), CreatedAt: utc(k.CreatedAt)}
}

func (s *Server) listAPIKeys(c *gin.Context) {
	keys, err := s.identity.ListAPIKeys(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	now := time.Now()
	out := make([]apiKeyResp, len(keys))
	for i, k := range keys {
		out[i] = toAPIKeyResp(k, now)
	}
	ok(c, http.StatusOK, out)
}

func (s *Server) createAPIKey(c *gin.Context) {
	var req struct {
		Name      string  `json:"name"`
		ExpiresAt *string `json:"expires_at"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	var exp *time.Time
	if req.ExpiresAt != nil && *req.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339, *req.ExpiresAt)
		if err != nil {
			s.fail(c, apperr.Invalidf("expires_at must be an RFC 3339 timestamp, e.g. 2030-01-01T00:00:00Z"))
			return
		}
		exp = &t
	}
	k, err := s.identity.CreateAPIKey(c.Request.Context(), principal(c), req.Name, exp)
	if err != nil {
		s.fail(c, err)
		return
	}
	r := toAPIKeyResp(k.APIKey, time.Now())
	r.Key = k.Key
	ok(c, http.StatusCreated, r)
}

func (s *Server) deleteAPIKey(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.identity.DeleteAPIKey(c.Request.Context(), principal(c).OrgID, id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "API key revoked")
}
