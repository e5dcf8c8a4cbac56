package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/integration/docframe"
	"wharf/jobs"
)

// Doctypes implements docframe.Hook: every DocType's events may be a
// notification's, and Platform Notification's own are validated.
func (s *Service) Doctypes() []string { return []string{"*"} }

// Handle implements docframe.Hook. It runs in the document's transaction:
// what it records commits with the change or not at all.
func (s *Service) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, doc *docframe.Doc) error {
	if doc.Doctype == NotificationDoctype && ev == docframe.Validate {
		return s.validate(ctx, doc)
	}
	event := eventOf(ev, doc)
	if event == "" {
		return nil
	}
	return s.record(ctx, tx, event, doc)
}

// eventOf names the notification event of a hook event. on_update also
// runs at the end of an insert, where it is not a save: an insert gives
// creation and modified one and the same instant, a later save a new
// modified.
func eventOf(ev docframe.Event, doc *docframe.Doc) string {
	switch ev {
	case docframe.AfterInsert:
		return docframe.EventAfterInsert
	case docframe.OnUpdate:
		if doc.Creation.Equal(doc.Modified) {
			return ""
		}
		return docframe.EventAfterSave
	case docframe.OnSubmit:
		return docframe.EventAfterSubmit
	case docframe.OnCancel:
		return docframe.EventAfterCancel
	case docframe.OnTrash:
		return docframe.EventBeforeDelete
	}
	return ""
}

// guardKey marks the context of a Set Property After Alert save: the save
// must not fire the notification that made it (Frappe's
// in_notification_update), or a notification on After Save would send
// again for its own change.
type guardKey struct{}

type guard struct {
	org                         uuid.UUID
	doctype, name, notification string
}

// record writes a ledger row for each enabled DocType Event notification
// of the document's DocType and event, with the document as it is now.
func (s *Service) record(ctx context.Context, tx *gorm.DB, event string, doc *docframe.Doc) error {
	names, err := s.eventNotifications(ctx, tx, event, doc)
	if err != nil || len(names) == 0 {
		return err
	}
	g, _ := ctx.Value(guardKey{}).(guard)
	snap, err := json.Marshal(s.snapshot(doc))
	if err != nil {
		return err
	}
	now := s.now().UTC()
	for _, n := range names {
		if g.org == doc.OrganizationID && g.doctype == doc.Doctype && g.name == doc.Name && g.notification == n {
			continue
		}
		key := fmt.Sprintf("event\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", n, doc.Doctype, doc.Name, event, doc.Modified.UTC().Format(time.RFC3339Nano))
		if err := tx.WithContext(ctx).Exec(`INSERT INTO wharfnotify_sends (id, organization_id, dedupe_key, notification,
			reference_doctype, reference_name, event, snapshot, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?) ON CONFLICT (organization_id, dedupe_key) DO NOTHING`,
			uuid.New(), doc.OrganizationID, key, n, doc.Doctype, doc.Name, event, string(snap), now, now).Error; err != nil {
			return err
		}
	}
	return nil
}

// snapshot is a document's values as a condition sees them: its fields
// (and tables) and its standard properties, timestamps as Frappe writes
// them. Secrets (a Platform Account's verify token) are left out: a
// condition or a parameter must not carry them anywhere.
func (s *Service) snapshot(doc *docframe.Doc) map[string]any {
	out := make(map[string]any, len(doc.Fields)+7)
	for k, v := range doc.Fields {
		if !s.fw().IsSecret(doc.Doctype, k) {
			out[k] = v
		}
	}
	out["name"], out["doctype"], out["docstatus"] = doc.Name, doc.Doctype, doc.Docstatus
	out["owner"], out["modified_by"] = doc.Owner, doc.ModifiedBy
	out["creation"], out["modified"] = doc.Creation.UTC().Format(time.DateTime), doc.Modified.UTC().Format(time.DateTime)
	return out
}

// DocumentEvent implements docframe.EventSink: once the change committed,
// the rows it recorded are sent at once rather than at the next sweep.
// A committed change of a notification replaces its organization's
// version of the notifications' lookup first (cache.go).
func (s *Service) DocumentEvent(ctx context.Context, e docframe.DocEvent) {
	if e.Doc.Doctype == NotificationDoctype {
		s.notificationsChanged(ctx, e.OrganizationID)
	} else if s.notifications != nil {
		// An event without notifications recorded nothing: the ledger is
		// not read (a query per document event otherwise). The lookup the
		// record made in this process moments ago answers, without asking
		// Redis again (versioned.Last): should the notifications have
		// changed since, what this misses is sent by the sweep.
		k := notificationsKey{e.OrganizationID, e.Doc.Doctype, e.Event}
		if names, ok := s.notifications.Last(k); ok && len(names) == 0 {
			return
		}
	}
	var ids []uuid.UUID
	if err := s.db.WithContext(ctx).Raw(`SELECT id FROM wharfnotify_sends
		WHERE organization_id = ? AND reference_doctype = ? AND reference_name = ? AND status = 'pending'`,
		e.OrganizationID, e.Doc.Doctype, e.Doc.Name).Scan(&ids).Error; err != nil {
		s.log.Warn("notifications: cannot read pending sends; the sweep will send them", "doctype", e.Doc.Doctype, "name", e.Doc.Name, "error", err)
		return
	}
	s.enqueueSends(ctx, e.OrganizationID, ids)
}

// enqueueSends wakes the worker for ledger rows; a failure is only logged,
// as the sweep enqueues pending rows again.
func (s *Service) enqueueSends(ctx context.Context, orgID uuid.UUID, ids []uuid.UUID) {
	for _, id := range ids {
		_, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.NotifySend{OrganizationID: orgID, SendID: id})
		if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
			s.log.Warn("notifications: cannot enqueue a send; the sweep will retry", "send_id", id, "error", err)
		}
	}
}
