// Package messagesapi is the HTTP surface of messaging: a contact's
// conversation, free-form, media and template sends, and read receipts.
package messagesapi

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
)

// Maskers gives an organization's phone-number masker.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Handlers serves the messages routes.
type Handlers struct {
	messaging *messaging.Service
	maskers   Maskers
}

// New builds the messages handlers.
func New(msg *messaging.Service, maskers Maskers) *Handlers {
	return &Handlers{messaging: msg, maskers: maskers}
}
