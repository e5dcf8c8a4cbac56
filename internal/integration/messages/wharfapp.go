// Package messages is the messaging integration of the framework-integration
// spec (the app "wharf", methods wharf.api.*), built on internal/docframe: a
// Frappe-shaped face over the core domains, not a second messaging stack.
// Its DocTypes (doctypes.go) are mirrored into the core by hooks that run in
// each document's transaction: a Platform Account is a core platform
// account (accounts.go), an Outgoing Platform Message is a core message
// queued for the message:send job (messages.go). As an inbound consumer
// (consumer.go) it reflects the provider's statuses into Platform Messages
// and stores incoming messages as Incoming Platform Messages.
//
// The exported API, for the integration's other packages (notifications,
// bulk messages), which app/ wires:
//
//   - AccountFor(ctx, orgID, platformAccountName) → the core account id;
//   - TemplateFor(ctx, orgID, platformTemplateName) → the core template id,
//     its name and language;
//   - SendTemplate(ctx, orgID, SendTemplate{...}) → the name of the Outgoing
//     Platform Message it created and queued (sent by the worker).
//
// app/ builds a Service, hands Hooks, Methods, BuiltIn and the Service
// itself (an EventSink and a docframe.Binder) to docframe.New, which binds
// itself to the integration.
package messages

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/contacts"
	"wharf/internal/integration/docframe"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
	"wharf/internal/pflows"
	"wharf/internal/templates"
	"wharf/jobs"
)

// By is who the integration's own writes are recorded as (Frappe's
// Administrator, which also owns the built-in DocTypes).
const By = "Administrator"

// system is the integration's own actor, for reads it makes on its own
// behalf (nothing of them is answered as is).
var system = docframe.Actor{Email: By, Role: docframe.RoleAdmin}

// Publisher publishes customer webhook events after their commit (contact
// created by a send): webhooks.Service.
type Publisher interface {
	Publish(ctx context.Context, orgID uuid.UUID, ids ...uuid.UUID)
}

// Deps are the core domains the integration mirrors into.
type Deps struct {
	DB        *gorm.DB
	Accounts  *accounts.Service
	Contacts  *contacts.Service
	Templates *templates.Service
	Messaging *messaging.Service
	Flows     *pflows.Service
	Settings  *orgsettings.Service
	Webhooks  Publisher
	Enqueuer  *jobs.Enqueuer
	// ProviderURL is a Platform Account's default url (the provider's base
	// address the service is configured with).
	ProviderURL string
	// SendWait is how long send_message waits for the send job to get the
	// provider's answer before it answers Queued (0: 5 seconds).
	SendWait time.Duration
	Log      *slog.Logger
}

// Service is the integration.
type Service struct {
	Deps
	frame   *docframe.Service
	ensured sync.Map // organization id → true once its DocTypes were ensured by this process
}

// New builds the integration; the framework is given to it by Bind.
func New(d Deps) *Service {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.SendWait == 0 {
		d.SendWait = 5 * time.Second
	}
	return &Service{Deps: d}
}

// Bind gives the integration the framework it extends (docframe.Binder:
// docframe.New calls it on its event sink).
func (s *Service) Bind(f *docframe.Service) { s.frame = f }

// Hooks are the integration's document hooks, for docframe.Options.
func (s *Service) Hooks() []docframe.Hook {
	return []docframe.Hook{accountHook{s}, messageHook{s}, templateHook{s}, flowHook{s}}
}

// ConsumerName implements inbound.Consumer.
func (s *Service) ConsumerName() string { return "wharfapp" }

// Ensure creates or updates the integration's DocTypes in the organization
// (once per process and organization; EnsureDocType is idempotent).
func (s *Service) Ensure(ctx context.Context, orgID uuid.UUID) error {
	if _, ok := s.ensured.Load(orgID); ok {
		return nil
	}
	for _, dt := range s.doctypes() {
		if err := s.frame.EnsureDocType(ctx, orgID, dt); err != nil {
			return err
		}
	}
	s.ensured.Store(orgID, true)
	return nil
}

// BuiltIn is docframe.Options.BuiltIn: a DocType of the integration that
// the organization does not have yet is created with the others on its
// first use, whatever the route.
func (s *Service) BuiltIn(ctx context.Context, orgID uuid.UUID, doctype string) (bool, error) {
	for _, dt := range s.doctypes() {
		if dt.Name == doctype {
			s.ensured.Delete(orgID) // a DocType missing despite the cache
			return true, s.Ensure(ctx, orgID)
		}
	}
	return false, nil
}

// DocumentEvent is the integration's docframe.EventSink: the work that must
// follow a commit (enqueueing a send, an account's verification). A lost
// event is recovered by the core's sweeps (a pending message is enqueued
// by the message sweeper).
func (s *Service) DocumentEvent(ctx context.Context, e docframe.DocEvent) {
	if e.Event != docframe.EventAfterInsert && e.Event != docframe.EventAfterSave {
		return
	}
	switch e.Doc.Doctype {
	case DoctypeMessage:
		if e.Event == docframe.EventAfterInsert {
			if id, err := uuid.Parse(str(e.Doc.Get("core_message_id"))); err == nil && str(e.Doc.Get("status")) == StatusQueued {
				s.Messaging.EnqueueSend(ctx, e.OrganizationID, id)
			}
		}
	case DoctypeAccount:
		s.afterAccountSaved(ctx, e)
	case DoctypeTemplate:
		if e.Event == docframe.EventAfterInsert && str(e.Doc.Get("template_id")) == "" {
			s.enqueue(ctx, jobs.WharfTemplateSubmit{OrganizationID: e.OrganizationID, Name: e.Doc.Name})
		}
	}
}

func (s *Service) enqueue(ctx context.Context, p jobs.Payload) {
	if s.Enqueuer == nil {
		return
	}
	if _, err := s.Enqueuer.Enqueue(context.WithoutCancel(ctx), p); err != nil {
		s.Log.Warn("wharfapp: cannot enqueue", "task", p.TaskType(), "error", err)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
