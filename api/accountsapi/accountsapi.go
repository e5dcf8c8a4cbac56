// Package accountsapi is the HTTP surface of platform accounts: the
// organization's provider numbers with their credentials, the connection
// test, and onboarding by embedded signup.
package accountsapi

import "wharf/internal/accounts"

// Handlers serves the accounts routes.
type Handlers struct {
	accounts *accounts.Service
}

// New builds the accounts handlers.
func New(accts *accounts.Service) *Handlers { return &Handlers{accounts: accts} }
