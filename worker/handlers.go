package worker

import (
	"context"
	"log/slog"

	"github.com/hibiken/asynq"

	"wharf/internal/identity"
	"wharf/jobs"
)

// Handlers are the domain services the job handlers call.
type Handlers struct {
	Log      *slog.Logger
	Identity *identity.Service
}

// Register adds every job handler to mux.
func (h *Handlers) Register(mux *asynq.ServeMux) {
	mux.HandleFunc(jobs.KindAPIKeyTouch, h.apiKeyTouch)
	mux.HandleFunc(jobs.KindPurgeRefreshTokens, h.purgeRefreshTokens)
}

func (h *Handlers) apiKeyTouch(ctx context.Context, t *asynq.Task) error {
	p, err := jobs.Decode[jobs.APIKeyTouch](t)
	if err != nil {
		return err
	}
	return h.Identity.TouchAPIKey(ctx, p.OrganizationID, p.APIKeyID, p.UsedAt)
}

func (h *Handlers) purgeRefreshTokens(ctx context.Context, t *asynq.Task) error {
	n, err := h.Identity.PurgeRefreshTokens(ctx)
	if err == nil && n > 0 {
		h.Log.Info("purged refresh tokens", "count", n)
	}
	return err
}
