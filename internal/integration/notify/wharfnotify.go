// Package notify is the messaging integration's notifications
// (framework-integration spec, "Notification"): Platform Notification
// documents that send a Platform Template when a document event of their
// reference DocType happens (DocType Event) or at a frequency (Scheduler
// Event), when a Starlark condition over the document holds.
//
// Exactly once: a DocType event is recorded in the send ledger
// (wharfnotify_sends) by a docframe Hook inside the document's own
// transaction, so an event exists if and only if its document change
// committed; the after-commit EventSink only wakes the worker early and the
// minute tick's sweep replaces lost wake-ups. The worker moves a row
// pending -> sending by compare-and-set before it calls the Sender, so no
// retry, duplicate task or second worker sends a row twice.
//
// The send itself belongs to the integration's base (Platform Message): this
// package only declares the Sender it needs.
package notify

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/versioned"
	"wharf/internal/integration/docframe"
	"wharf/jobs"
)

// Sender sends a template message (the integration's Platform Message
// path). It answers the name of the Platform Message it created.
type Sender interface {
	SendTemplate(ctx context.Context, orgID uuid.UUID, m TemplateSend) (messageName string, err error)
}

// TemplateSend is one template message to send. Account and Template are
// Platform Account and Platform Template document names; an empty Account
// is the organization's default outgoing account. IdempotencyKey is the
// ledger row's id: a Sender that records it can refuse a second send of one
// key.
type TemplateSend struct {
	Account          string      `json:"account"`
	To               string      `json:"to"`
	Template         string      `json:"template"`
	Parameters       []string    `json:"parameters"`
	ButtonURLParam   string      `json:"button_url_param,omitempty"`
	Attachment       *Attachment `json:"attachment,omitempty"`
	ReferenceDoctype string      `json:"reference_doctype"`
	ReferenceName    string      `json:"reference_name"`
	IdempotencyKey   string      `json:"idempotency_key"`
}

// Attachment is a file sent as the template's document header.
type Attachment struct {
	URL      string `json:"url"`
	Filename string `json:"filename,omitempty"`
}

// Deps are what the service is built from.
type Deps struct {
	DB       *gorm.DB
	Enqueuer *jobs.Enqueuer
	Sender   Sender
	// Files stores documents' prints (Attach Document Print); nil refuses
	// those sends.
	Files Files
	Log   *slog.Logger
	// Now is the clock (nil: time.Now); tests fix it.
	Now func() time.Time
	// Limits are the condition budgets (zero: the defaults).
	Limits Limits
	// Redis, when set, keeps the lookup of a document event's
	// notifications in process, exact across replicas through versions in
	// Redis (cache.go); the service must then be the framework's event sink
	// too. CacheMaxAge bounds an entry's life should an invalidation be
	// lost (zero: 10 s).
	Redis       redis.UniversalClient
	CacheMaxAge time.Duration
	// Evaluator configures the processes conditions run in (zero: the
	// defaults, this executable started with EvaluatorArg). They start on
	// the first evaluation; the api, which only checks conditions, starts
	// none.
	Evaluator EvaluatorConfig
}

// Limits bound a condition's run and a scheduled run's documents.
type Limits struct {
	// Steps is Starlark's execution step budget (default 100,000).
	Steps uint64
	// Time is the wall-clock budget of one condition (default 1 s).
	Time time.Duration
	// Documents is how many documents of the reference DocType one
	// scheduled run looks at (default 1,000).
	Documents int
	// Memory is what one evaluation may allocate in all (default 16 MiB),
	// doc._data_list's text included.
	Memory uint64
	// DataList is how many objects doc._data_list may hold (default
	// 1,000).
	DataList int
	// Sends is how many sends one scheduled run may plan (default
	// 10,000); the run stops there.
	Sends int
}

// Service is the notifications. It is a docframe.Hook (the ledger, the
// validation of Platform Notification) and a docframe.EventSink (the
// wake-up after the commit): pass it to docframe.New, which binds it.
type Service struct {
	db     *gorm.DB
	enq    *jobs.Enqueuer
	sender Sender
	files  Files
	log    *slog.Logger
	now    func() time.Time
	limits Limits
	eval   *evaluator
	frame  atomic.Pointer[docframe.Service]
	// notifications caches the lookup of an event's notifications (nil:
	// every event reads them).
	notifications *versioned.Cache[notificationsKey, []string]
}

// New builds the service.
func New(d Deps) *Service {
	s := &Service{db: d.DB, enq: d.Enqueuer, sender: d.Sender, files: d.Files, log: d.Log, now: d.Now, limits: d.Limits}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.limits.Steps == 0 {
		s.limits.Steps = 100_000
	}
	if s.limits.Time == 0 {
		s.limits.Time = time.Second
	}
	if s.limits.Documents == 0 {
		s.limits.Documents = 1000
	}
	if s.limits.Memory == 0 {
		s.limits.Memory = 16 << 20
	}
	if s.limits.DataList == 0 {
		s.limits.DataList = 1000
	}
	if s.limits.Sends == 0 {
		s.limits.Sends = 10_000
	}
	s.eval = newEvaluator(d.Evaluator)
	s.notifications = newNotificationsCache(d.Redis, d.CacheMaxAge, s.log)
	return s
}

// Close stops the processes conditions run in.
func (s *Service) Close() { s.eval.Close() }

// Bind is how docframe.New hands the service the framework it hooks into
// (docframe.Binder): the framework takes its hooks at construction, so the
// service exists first, and New binds it before anyone can use either.
func (s *Service) Bind(f *docframe.Service) { s.frame.Store(f) }

func (s *Service) fw() *docframe.Service {
	f := s.frame.Load()
	if f == nil {
		panic("wharfnotify: the service was not passed to docframe.New")
	}
	return f
}

// admin is who the notifications act as in the framework (Frappe's
// Administrator, who runs scheduled and post-send work).
var admin = docframe.Actor{Email: "Administrator", Role: docframe.RoleAdmin}
