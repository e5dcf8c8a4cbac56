package docframe

import (
	"context"
	"slices"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Event is a document event a hook runs on (Frappe's controller methods).
//
// Order on insert: before_insert, (naming), validate, the row's insert,
// after_insert, on_update. On save: validate, the row's update, on_update.
// On submit: validate, docstatus 0 to 1, on_submit. On cancel: docstatus
// 1 to 2, on_cancel. On delete: on_trash, the row's delete.
type Event string

// The events.
const (
	BeforeInsert Event = "before_insert"
	Validate     Event = "validate"
	AfterInsert  Event = "after_insert"
	OnUpdate     Event = "on_update"
	OnSubmit     Event = "on_submit"
	OnCancel     Event = "on_cancel"
	OnTrash      Event = "on_trash"
)

// Hook is code that runs on the events of some DocTypes' documents, inside
// the document's transaction (tx): what it writes commits or rolls back
// with the document. A before_insert or validate hook may change doc (the
// framework validates the result) or refuse with Validationf; any error
// refuses the operation. The integration implements hooks and passes them
// to New.
type Hook interface {
	// Doctypes are the DocTypes handled; "*" handles every DocType.
	Doctypes() []string
	Handle(ctx context.Context, tx *gorm.DB, ev Event, doc *Doc) error
}

// MethodHook is a hook whose DocTypes' documents have whitelisted methods,
// run by POST /api/resource/{doctype}/{name} with run_method (Frappe's
// doc.run_method). The method runs in the document's transaction with the
// document locked; changes it makes to doc are saved (validate, update,
// on_update) before the commit. Its result is the answer's message.
type MethodHook interface {
	Hook
	// DocMethods are the method names whitelisted on doctype.
	DocMethods(doctype string) []string
	RunDocMethod(ctx context.Context, tx *gorm.DB, method string, doc *Doc, args map[string]any) (any, error)
}

// EventSink receives document events once their transaction committed,
// for subscribers such as notifications. Delivery is at most once (a crash
// between the commit and the call loses the event); a subscriber that
// needs every event writes its own record from a Hook, in the transaction.
type EventSink interface {
	DocumentEvent(ctx context.Context, e DocEvent)
}

// EventSinks passes every event to each of several sinks in order (the
// notifications and the bulk messages both follow documents); it binds those
// that are Binders.
type EventSinks []EventSink

// DocumentEvent implements EventSink.
func (ss EventSinks) DocumentEvent(ctx context.Context, e DocEvent) {
	for _, s := range ss {
		s.DocumentEvent(ctx, e)
	}
}

// Bind implements Binder.
func (ss EventSinks) Bind(f *Service) {
	for _, s := range ss {
		if b, ok := s.(Binder); ok {
			b.Bind(f)
		}
	}
}

// Names of the published events (the integration's notification events).
const (
	EventAfterInsert  = "After Insert"
	EventAfterSave    = "After Save"
	EventAfterSubmit  = "After Submit"
	EventAfterCancel  = "After Cancel"
	EventBeforeDelete = "Before Delete"
)

// DocEvent is a committed document event.
type DocEvent struct {
	OrganizationID uuid.UUID
	Event          string
	Doc            *Doc
}

func handles(h Hook, doctype string) bool {
	ds := h.Doctypes()
	return slices.Contains(ds, doctype) || slices.Contains(ds, "*")
}

// run calls the hooks of doc's DocType for ev, in the order they were
// given; the first error stops the operation.
func (s *Service) run(ctx context.Context, tx *gorm.DB, ev Event, doc *Doc) error {
	for _, h := range s.hooks {
		if handles(h, doc.Doctype) {
			if err := h.Handle(ctx, tx, ev, doc); err != nil {
				return err
			}
		}
	}
	return nil
}

// publish hands committed events to the sink.
func (s *Service) publish(ctx context.Context, doc *Doc, events ...string) {
	if s.events == nil {
		return
	}
	for _, e := range events {
		s.events.DocumentEvent(context.WithoutCancel(ctx), DocEvent{OrganizationID: doc.OrganizationID, Event: e, Doc: doc.clone()})
	}
}

// docMethod finds the hook that whitelists method on doctype.
func (s *Service) docMethod(doctype, method string) (MethodHook, bool) {
	for _, h := range s.hooks {
		if mh, ok := h.(MethodHook); ok && handles(h, doctype) && slices.Contains(mh.DocMethods(doctype), method) {
			return mh, true
		}
	}
	return nil, false
}
