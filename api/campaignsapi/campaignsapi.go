// Package campaignsapi is the HTTP surface of campaigns: the campaigns
// themselves, their recipients, the state machine's actions and the
// progress (one answer or a server-sent event stream).
package campaignsapi

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/campaigns"
	"wharf/internal/orgsettings"
)

// Maskers gives an organization's phone-number masker.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Handlers serves the campaigns routes.
type Handlers struct {
	campaigns *campaigns.Service
	maskers   Maskers
}

// New builds the campaigns handlers.
func New(cps *campaigns.Service, maskers Maskers) *Handlers {
	return &Handlers{campaigns: cps, maskers: maskers}
}
