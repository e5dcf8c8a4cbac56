// Package customactionsapi is the HTTP surface of custom actions: the
// buttons managers configure, agents run for a contact, and the public
// one-time redirect a URL action's run hands to the browser.
package customactionsapi

import "wharf/internal/customactions"

// Handlers serves the custom actions routes.
type Handlers struct {
	actions *customactions.Service
}

// New builds the custom actions handlers.
func New(a *customactions.Service) *Handlers { return &Handlers{actions: a} }
