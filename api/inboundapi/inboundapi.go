// Package inboundapi is the provider's side of the HTTP surface: the
// subscription handshake and the webhook the provider posts events to
// (GET and POST /api/webhook). Customers' outbound webhooks are another
// matter, in webhooksapi.
package inboundapi

import (
	"context"
	"io"
)

// Inbound is what the handlers use of the inbound domain.
type Inbound interface {
	Verify(ctx context.Context, mode, token, challenge string) (string, error)
	Intake(ctx context.Context, source, signature string, body io.Reader) (int, error)
}

// Handlers serves the provider's webhook.
type Handlers struct {
	inbound Inbound
}

// New builds the inbound handlers.
func New(in Inbound) *Handlers { return &Handlers{inbound: in} }
