// Package settingsapi is the HTTP surface of organization settings: the two
// endpoint families of the spec over the same stored values, and the audio
// uploads (hold music, ringback).
package settingsapi

import (
	"context"
	"io"

	"github.com/google/uuid"

	"wharf/internal/orgsettings"
)

// Settings is what the handlers use of the settings domain.
type Settings interface {
	Get(ctx context.Context, orgID uuid.UUID) (string, orgsettings.Settings, error)
	Apply(ctx context.Context, orgID uuid.UUID, u orgsettings.Update) error
	UploadAudio(ctx context.Context, orgID uuid.UUID, kind string, r io.Reader) (*orgsettings.AudioFile, error)
}

// Handlers serves the settings routes.
type Handlers struct {
	settings Settings
}

// New builds the settings handlers.
func New(settings Settings) *Handlers { return &Handlers{settings: settings} }
