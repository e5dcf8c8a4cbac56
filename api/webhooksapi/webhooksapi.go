// Package webhooksapi is the HTTP surface of customers' outbound webhooks:
// their configuration, a test delivery and the delivery log. The provider's
// inbound webhook is another matter, in inboundapi.
package webhooksapi

import "wharf/internal/webhooks"

// Handlers serves the outbound webhooks routes.
type Handlers struct {
	webhooks *webhooks.Service
}

// New builds the outbound webhooks handlers.
func New(hooks *webhooks.Service) *Handlers { return &Handlers{webhooks: hooks} }
