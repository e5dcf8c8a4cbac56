// Package contactsapi is the HTTP surface of contacts: contacts with their
// tags, assignment and chatbot session data, and the organization's tags.
// Phone numbers and names go out through the organization's masker.
package contactsapi

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/contacts"
	"wharf/internal/orgsettings"
)

// Maskers gives an organization's phone-number masker.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Sessions gives a contact's latest chatbot session (the chatbot domain),
// nil when it never had one.
type Sessions interface {
	ContactSession(ctx context.Context, orgID, contactID uuid.UUID) (*contacts.SessionData, error)
}

// Handlers serves the contacts and tags routes.
type Handlers struct {
	contacts *contacts.Service
	maskers  Maskers
	sessions Sessions
}

// New builds the contacts handlers.
func New(cts *contacts.Service, maskers Maskers, sessions Sessions) *Handlers {
	return &Handlers{contacts: cts, maskers: maskers, sessions: sessions}
}
