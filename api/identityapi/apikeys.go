package identityapi

import (
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
)

func (h *Handlers) listAPIKeys(c *gin.Context) {
	keys, err := h.ids.ListAPIKeys(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	now := time.Now()
	out := make([]apiKeyResp, len(keys))
	for i, k := range keys {
		out[i] = toAPIKeyResp(k, now)
	}
	web.OK(c, out)
}

func (h *Handlers) createAPIKey(c *gin.Context) {
	var req createAPIKeyRequest
	if !web.BindJSON(c, &req) {
		return
	}
	var exp *time.Time
	if req.ExpiresAt != nil && *req.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339, *req.ExpiresAt)
		if err != nil {
			web.Fail(c, apperr.Invalidf("expires_at must be an RFC 3339 timestamp, e.g. 2030-01-01T00:00:00Z"))
			return
		}
		exp = &t
	}
	k, err := h.ids.CreateAPIKey(c.Request.Context(), web.Principal(c), req.Name, exp)
	if err != nil {
		web.Fail(c, err)
		return
	}
	r := toAPIKeyResp(k.APIKey, time.Now())
	r.Key = k.Key
	web.Created(c, r)
}

func (h *Handlers) deleteAPIKey(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.ids.DeleteAPIKey(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "API key revoked")
}
