// Package templatesapi is the HTTP surface of message templates: the
// organization's templates, their submission to the provider and the sync
// of what the provider holds.
package templatesapi

import "wharf/internal/templates"

// Handlers serves the templates routes.
type Handlers struct {
	templates *templates.Service
}

// New builds the templates handlers.
func New(tpl *templates.Service) *Handlers { return &Handlers{templates: tpl} }
