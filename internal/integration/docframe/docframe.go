// Package docframe is the document framework of the framework-integration
// spec, in the manner of Frappe: organization-scoped document types
// (DocTypes, themselves documents) whose documents are stored as JSONB, named
// by rules and series, validated by field type, guarded by per-DocType role
// permissions, moved through docstatus (draft, submitted, cancelled), and
// extended by hooks that run inside each document's transaction. The
// generic resource API (api/resourceapi) and the messaging integration's
// doctypes are built on it; it imports no other domain, so that any of them
// may build on it.
package docframe

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/secrets"
	"wharf/internal/infra/versioned"
	"wharf/jobs"
)

// RoleAdmin is the organization role that holds every right on every
// DocType and alone may define DocTypes (with super admins).
const RoleAdmin = "Admin"

// Actor is who acts: a user of the organization under one role. Owners
// and modifiers are recorded by email, as Frappe shows them.
type Actor struct {
	UserID     uuid.UUID
	Email      string
	Role       string
	SuperAdmin bool
	// Perms are the caller's core permissions, which decide the rights on
	// guarded DocTypes (Guard); nil holds none.
	Perms Permissions
	// MaskPhones is set when the caller's organization masks phone numbers
	// (mask_phone_numbers): answers mask guarded DocTypes' numbers and
	// names. The integration's own reads leave it unset.
	MaskPhones bool
}

func (a Actor) isAdmin() bool { return a.SuperAdmin || a.Role == RoleAdmin }

// Options are what the framework is extended with, all given at
// construction.
type Options struct {
	// Hooks run on document events inside the document's transaction.
	Hooks []Hook
	// Events receives document events after their commit (nil: none).
	Events EventSink
	// Methods are whitelisted methods callable at /api/method/<name>,
	// besides the framework's own (methods.go).
	Methods []Method
	// BuiltIn, when set, is asked about a DocType an organization does not
	// have before the framework answers that it does not exist: it ensures
	// the built-in DocTypes it knows (EnsureDocType) and reports whether
	// doctype is one of them, so that an integration's DocTypes exist from
	// their first use whatever route comes first.
	BuiltIn func(ctx context.Context, orgID uuid.UUID, doctype string) (bool, error)
	// BuiltInNames are the addressable DocTypes BuiltIn creates: the desk's
	// list of DocTypes (DeskMethod) creates those an organization lacks.
	BuiltInNames []string
	// Guards tie DocTypes that hold the core's data to the core's
	// permissions, masking and secrets (guard.go).
	Guards []Guard
	// Enqueuer has the worker build a DocType's field indexes after its
	// change committed (indexes.go); nil: nobody does until BuildIndexes or
	// SweepIndexes is called.
	Enqueuer *jobs.Enqueuer
	// Redis, when set, keeps DocType definitions in process, exact across
	// replicas through versions in Redis (metacache.go); every process
	// that writes DocTypes must have it so that it replaces the versions.
	// CacheMaxAge bounds an entry's life should an invalidation be lost
	// (zero: 10 s).
	Redis       redis.UniversalClient
	CacheMaxAge time.Duration
	Log         *slog.Logger
}

// Service is the document framework.
type Service struct {
	db           *gorm.DB
	box          *secrets.Box
	hooks        []Hook
	events       EventSink
	methods      map[string]Method
	builtIn      func(ctx context.Context, orgID uuid.UUID, doctype string) (bool, error)
	builtInNames []string
	guards       map[string]*Guard
	enq          *jobs.Enqueuer
	log          *slog.Logger
	now          func() time.Time
	// metas caches DocType definitions (nil: every read loads them).
	metas *versioned.Cache[metaKey, cachedMeta]
}

// New builds the framework. Two methods of one name, or two guards of one
// DocType, are a programming error, reported here.
func New(db *gorm.DB, box *secrets.Box, o Options) (*Service, error) {
	s := &Service{db: db, box: box, hooks: o.Hooks, events: o.Events, methods: map[string]Method{}, log: o.Log, builtIn: o.BuiltIn,
		builtInNames: o.BuiltInNames,
		enq:          o.Enqueuer,
		now:          func() time.Time { return time.Now().UTC() }}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.metas = newMetaCache(o.Redis, o.CacheMaxAge, s.log)
	var err error
	if s.guards, err = guardIndex(o.Guards); err != nil {
		return nil, err
	}
	for _, m := range append(append(builtinMethods(), deskMethod()), o.Methods...) {
		if _, dup := s.methods[m.Name]; dup {
			return nil, fmt.Errorf("docframe: method %s registered twice", m.Name)
		}
		s.methods[m.Name] = m
	}
	for _, h := range o.Hooks {
		if b, ok := h.(Binder); ok {
			b.Bind(s)
		}
	}
	if b, ok := o.Events.(Binder); ok {
		b.Bind(s)
	}
	return s, nil
}

// Binder is a hook or event sink that also reads or changes documents
// through the framework (a notification that sets a property after its
// send, a scheduled run that lists documents). The framework and such an
// extension need each other; New breaks the cycle by handing itself to every
// Binder among its hooks and sink before it returns, so no extension is ever
// seen without its framework and the wiring code sets nothing afterwards.
type Binder interface {
	Bind(*Service)
}
