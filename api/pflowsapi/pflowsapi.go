// Package pflowsapi is the HTTP surface of platform-native flows
// (/api/flows): the organization's flows, their save to, publication at and
// deprecation at the provider, and the sync of what the provider holds.
// The states are the pflows domain's; these handlers bind and answer. A
// flow message is sent by messaging (the one send path) once pflows has
// said the flow is sendable.
package pflowsapi

import (
	"wharf/internal/messaging"
	"wharf/internal/pflows"
)

// Handlers serves the platform flows routes.
type Handlers struct {
	flows     *pflows.Service
	messaging *messaging.Service
}

// New builds the platform flows handlers.
func New(f *pflows.Service, m *messaging.Service) *Handlers { return &Handlers{flows: f, messaging: m} }
