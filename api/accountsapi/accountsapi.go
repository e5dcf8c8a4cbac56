// Package accountsapi is the HTTP surface of platform accounts: the
// organization's provider numbers with their credentials, the connection
// test, and onboarding by embedded signup.
package accountsapi

import "wharf/internal/accounts"

// Handlers serves the accounts routes.
type Handlers struct {
	accounts *accounts.Service
	// signupScript is the provider's embedded-signup script URL, given to
	// the console with the signup configuration.
	signupScript string
}

// New builds the accounts handlers.
func New(accts *accounts.Service) *Handlers { return &Handlers{accounts: accts} }

// WithSignupScript sets the embedded-signup script's URL that
// GET /api/embedded-signup/config gives (config EMBEDDED_SIGNUP_SCRIPT_URL).
func (h *Handlers) WithSignupScript(url string) *Handlers {
	h.signupScript = url
	return h
}
