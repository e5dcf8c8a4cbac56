package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/versioned"
	"wharf/internal/integration/docframe"
)

// Every document event looks up the enabled DocType Event notifications of
// its DocType and event (record, in the document's transaction). With
// Deps.Redis the answers are kept in process, exact across replicas
// through one version per organization in Redis
// (internal/infra/versioned), which DocumentEvent replaces after every
// committed change of one of the organization's Platform Notifications.
// Notifications are documents written only through the framework's own
// single-document operations (Insert, Update, Delete, Submit, Cancel),
// which all hand their events to DocumentEvent after the commit; SetValues
// (noteFailure) writes only last_error and last_error_at, which the lookup
// does not read. So the cache needs the service to be the framework's event
// sink as well as its hook, as New's callers wire it.
//
// The transaction rule: a lookup made for a Platform Notification's own
// event runs in the transaction that writes that notification, so it
// reads through the transaction and not the cache (a notification on
// Platform Notification sees itself; nothing uncommitted is kept). A
// lookup for any other document runs in a transaction that wrote no
// notification: a notification is always written in a transaction of its
// own (none of the framework's operations in a caller's transaction,
// InsertDocIn and the like, is used for them), whose only hook is this
// service's, which writes no other document. Such a lookup is served from
// the cache, and loaded through the transaction on a miss (it reads what
// is committed, at READ COMMITTED, without a second connection).

// notificationsKey names the notifications of one DocType and event.
type notificationsKey struct {
	org            uuid.UUID
	doctype, event string
}

// notificationsCacheMax bounds the entries kept; past it the cache starts
// over.
const notificationsCacheMax = 50_000

// defaultCacheMaxAge bounds an entry's life when Deps.CacheMaxAge is not
// set, should an invalidation be lost.
const defaultCacheMaxAge = 10 * time.Second

func notificationsVersionKey(org uuid.UUID) string { return "wharf:notify:v:" + org.String() }

func newNotificationsCache(rdb redis.UniversalClient, maxAge time.Duration, log *slog.Logger) *versioned.Cache[notificationsKey, []string] {
	if rdb == nil {
		return nil
	}
	if maxAge <= 0 {
		maxAge = defaultCacheMaxAge
	}
	return versioned.New[notificationsKey, []string](rdb, maxAge, notificationsCacheMax, log)
}

// eventNotifications answers the names of the enabled DocType Event
// notifications of doc's DocType and event, read through tx (the
// document's transaction) when not cached. The answer is shared: callers
// must not change it.
func (s *Service) eventNotifications(ctx context.Context, tx *gorm.DB, event string, doc *docframe.Doc) ([]string, error) {
	load := func() ([]string, error) {
		found, err := s.fw().Find(ctx, tx, docframe.Filter{OrganizationID: doc.OrganizationID, Doctype: NotificationDoctype,
			Equal:     map[string][]string{"notification_type": {TypeDocTypeEvent}, "reference_doctype": {doc.Doctype}, "doctype_event": {event}},
			Unchecked: []string{"disabled"}})
		if err != nil {
			return nil, err
		}
		names := make([]string, len(found))
		for i, n := range found {
			names[i] = n.Name
		}
		return names, nil
	}
	if s.notifications == nil || doc.Doctype == NotificationDoctype {
		return load()
	}
	return s.notifications.Get(ctx, notificationsKey{doc.OrganizationID, doc.Doctype, event},
		[]string{notificationsVersionKey(doc.OrganizationID)}, load)
}

// notificationsChanged replaces the organization's version after a change
// of one of its notifications committed.
func (s *Service) notificationsChanged(ctx context.Context, org uuid.UUID) {
	if s.notifications == nil {
		return
	}
	s.notifications.Changed(ctx, notificationsVersionKey(org), func(k notificationsKey) bool { return k.org == org })
}
