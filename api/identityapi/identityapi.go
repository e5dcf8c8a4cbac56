// Package identityapi is the HTTP surface of the identity domain: sign-up,
// sign-in and sessions, the caller's own profile, API keys, users, roles and
// permissions, organizations and their members.
package identityapi

import (
	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/authguard"
	"wharf/internal/infra/ratelimit"
)

// Handlers serves the identity routes.
type Handlers struct {
	ids *identity.Service
	// login counts failed sign-ins to POST /api/auth/login.
	loginGuard *authguard.Guard
	// origins decides which requests may set or use the console's session
	// cookie (cookie.go).
	origins web.Origins
}

// New builds the identity handlers; limiter backs the sign-in guard.
func New(ids *identity.Service, limiter *ratelimit.Limiter, origins web.Origins) *Handlers {
	return &Handlers{ids: ids, loginGuard: authguard.New(limiter, "wharf:authfail:login", authguard.Login()), origins: origins}
}
