package docframe

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/versioned"
)

// DocType definitions are read on every document operation (and, through
// NamesBy, on the core's hot path: every incoming message looks up a
// built-in DocType), so with Options.Redis they are kept in process, exact
// across replicas through one version per organization in Redis
// (internal/infra/versioned): every committed change of any of the
// organization's DocTypes (SaveDocType, EnsureDocType, DeleteDocType, the
// only writers of docframe_doctypes) replaces it. One version for all of an
// organization's DocTypes is what keeps a parent's entry, which holds its
// child tables' definitions, exact when only a child changes.
//
// Reads through a caller's transaction are served from the cache too, and
// that is exact: docframe_doctypes is written only inside the
// transactions SaveDocType, EnsureDocType and DeleteDocType open
// themselves, which read the definitions they change with lockDocType and
// never through the cache, and which run no hook or caller code. So no
// transaction a caller hands in (NamesBy, SetValues) has changed a DocType
// before it reads one, and what it would read is what is committed (every
// transaction runs at READ COMMITTED), which is what the cache holds. A
// load on a miss goes through the caller's transaction for the same
// reason, rather than taking a second connection from the pool while the
// transaction holds one. TestDocTypeTableHasNoOtherWriters keeps other
// packages from writing the table.
//
// Cached definitions are shared between requests: nothing may change a
// meta it did not build (withGuards runs in the load, before the meta is
// shared).

// metaKey names a cached definition.
type metaKey struct {
	org  uuid.UUID
	name string
}

// cachedMeta is a loaded DocType, nil when the organization has no
// DocType of that name: absence is kept too, since NamesBy asks for
// built-in DocTypes in organizations that never used the integration.
type cachedMeta struct{ m *meta }

// kept tells the definitions the cache keeps: the custom DocTypes, and the
// absence of one. A built-in DocType's definition is read every time: it is
// the one an upgrade rewrites, and a deployment's migration (or a test)
// may rewrite it in SQL, behind the framework's back; its documents are
// written on the core's paths, where a definition read is cheap next to
// the rest.
func (c cachedMeta) kept() bool { return c.m == nil || c.m.custom }

// metaCacheMax bounds the entries kept; past it the cache starts over.
const metaCacheMax = 50_000

func doctypesVersionKey(org uuid.UUID) string { return "wharf:docframe:doctypes:v:" + org.String() }

// meta answers a DocType of the organization with the DocTypes of its
// tables and its guards attached, read through db (the framework's pool
// or a caller's transaction, see above) when it is not cached. The answer
// is shared: callers must not change it.
func (s *Service) meta(ctx context.Context, db *gorm.DB, orgID uuid.UUID, name string) (*meta, error) {
	load := func() (cachedMeta, error) {
		m, err := loadMeta(ctx, db, orgID, name)
		if isNotFound(err) {
			return cachedMeta{}, nil
		}
		if err != nil {
			return cachedMeta{}, err
		}
		return cachedMeta{s.withGuards(m)}, nil
	}
	var c cachedMeta
	var err error
	if s.metas == nil {
		c, err = load()
	} else {
		c, err = s.metas.GetKeeping(ctx, metaKey{orgID, name}, []string{doctypesVersionKey(orgID)}, load, cachedMeta.kept)
	}
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		return nil, notFoundf("DocType %s not found", name)
	}
	return c.m, nil
}

// doctypesChanged replaces the organization's version after a transaction
// that wrote its DocTypes ended. It is called even when the transaction
// failed: a failed commit may still have committed, and a needless
// replacement only costs the next read a load.
func (s *Service) doctypesChanged(ctx context.Context, orgID uuid.UUID) {
	if s.metas == nil {
		return
	}
	s.metas.Changed(ctx, doctypesVersionKey(orgID), func(k metaKey) bool { return k.org == orgID })
}

// defaultCacheMaxAge bounds an entry's life when Options.CacheMaxAge is
// not set, should an invalidation be lost (a process that died between a
// commit and its write to Redis).
const defaultCacheMaxAge = 10 * time.Second

func newMetaCache(rdb redis.UniversalClient, maxAge time.Duration, log *slog.Logger) *versioned.Cache[metaKey, cachedMeta] {
	if rdb == nil {
		return nil
	}
	if maxAge <= 0 {
		maxAge = defaultCacheMaxAge
	}
	return versioned.New[metaKey, cachedMeta](rdb, maxAge, metaCacheMax, log)
}
