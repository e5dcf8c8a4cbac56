// Package identity owns users, organizations, memberships, roles and
// permissions, sessions (access and refresh tokens) and API keys: everything
// that answers "who is calling, and in which organization, with which
// permissions".
package identity

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
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
	// principals caches authenticated principals (nil: every request reads
	// its principal from PostgreSQL).
	principals *principalCache

	// hashSlots bounds the argon2 computations running at once in this
	// process: each takes 19 MiB and a CPU for tens of milliseconds, so a
	// burst of logins (or of guesses) must queue rather than exhaust memory.
	hashSlots chan struct{}
	// hashes counts the argon2 computations run, for tests and metrics.
	hashes atomic.Int64
}

// Option changes a default of NewService.
type Option func(*Service)

// WithPasswordConcurrency sets how many password hashes or verifications may
// run at once in this process (default: the number of CPUs, at least 2).
func WithPasswordConcurrency(n int) Option {
	return func(s *Service) { s.hashSlots = make(chan struct{}, max(n, 1)) }
}

// WithPrincipalCache keeps authenticated principals in process, exact across
// replicas through versions in rdb (see principalCache); maxAge bounds an
// entry's life should an invalidation be lost. The api uses it; domain tests
// and the worker, which authenticate nothing per request, do not.
func WithPrincipalCache(rdb redis.UniversalClient, maxAge time.Duration) Option {
	return func(s *Service) { s.principals = newPrincipalCache(rdb, maxAge, s.log) }
}

// NewService wires the identity domain. enq may be nil in processes that
// never authenticate API keys (the worker).
func NewService(db *gorm.DB, tokens *Tokens, enq *jobs.Enqueuer, log *slog.Logger, opts ...Option) *Service {
	s := &Service{db: db, tokens: tokens, log: log, now: func() time.Time { return time.Now().UTC() },
		hashSlots: make(chan struct{}, max(2, runtime.NumCPU()))}
	s.usage = newKeyUsage(enq, log)
	for _, o := range opts {
		o(s)
	}
	return s
}

// Tokens exposes the token signer (for expires_in).
func (s *Service) Tokens() *Tokens { return s.tokens }

// PasswordWork reports how many password hashes and verifications this
// Service has run. Tests use it to prove that a refused attempt did no
// argon2 work.
func (s *Service) PasswordWork() int64 { return s.hashes.Load() }

// principal returns the principal of user in org for an authenticated
// request: from the cache when there is one.
func (s *Service) principal(ctx context.Context, userID, orgID uuid.UUID) (*Principal, error) {
	if s.principals == nil {
		return loadPrincipal(ctx, s.db, userID, orgID)
	}
	return s.principals.get(ctx, userID, orgID, func() (*Principal, error) { return loadPrincipal(ctx, s.db, userID, orgID) })
}

// principalsChanged invalidates the cached principals of org (of every
// organization when org is nil) after a change to users, members or roles.
// It runs after the change's transaction, whether it committed or not: an
// invalidation too many costs one principal query.
func (s *Service) principalsChanged(ctx context.Context, org *uuid.UUID) {
	if s.principals != nil {
		s.principals.changed(ctx, org)
	}
}
