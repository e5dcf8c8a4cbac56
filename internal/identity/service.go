// Package identity owns users, organizations, memberships, roles and
// permissions, sessions (access and refresh tokens) and API keys: everything
// that answers "who is calling, and in which organization, with which
// permissions".
package identity

import (
	"log/slog"
	"time"

	"gorm.io/gorm"

	"wharf/jobs"
)

// Service is the identity domain. It is safe for concurrent use.
type Service struct {
	db     *gorm.DB
	tokens *Tokens
	log    *slog.Logger
	usage  *keyUsage
	now    func() time.Time
}

// NewService wires the identity domain. enq may be nil in processes that
// never authenticate API keys (the worker).
func NewService(db *gorm.DB, tokens *Tokens, enq *jobs.Enqueuer, log *slog.Logger) *Service {
	s := &Service{db: db, tokens: tokens, log: log, now: func() time.Time { return time.Now().UTC() }}
	s.usage = newKeyUsage(enq, log)
	return s
}

// Tokens exposes the token signer (for expires_in).
func (s *Service) Tokens() *Tokens { return s.tokens }
