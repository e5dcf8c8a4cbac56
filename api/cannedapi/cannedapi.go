// Package cannedapi is the HTTP surface of canned responses: the saved
// replies agents list, insert (use) and managers maintain.
package cannedapi

import "wharf/internal/canned"

// Handlers serves the canned responses routes.
type Handlers struct {
	canned *canned.Service
}

// New builds the canned responses handlers.
func New(c *canned.Service) *Handlers { return &Handlers{canned: c} }
