// Package bulk is the messaging integration's bulk messages and
// recipient lists: the Platform Bulk Message, Platform Bulk Recipient and
// Platform Recipient List DocTypes of the document framework, their hooks,
// and the wharf.api.bulk_progress, retry_failed and import_recipients
// methods. A bulk message is a core campaign underneath: submitting it
// launches a campaign in the document's transaction, the campaign
// pipeline paces, sends exactly once and tracks statuses, and the document
// and its sends' Platform Messages are a projection of the campaign, fed
// from the events outbox (projection.go). It depends on the integration's
// base (accounts and templates as documents) only through Resolver, taken
// at construction, and writes Platform Messages through the framework.
package bulk

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/campaigns"
	"wharf/internal/integration/docframe"
)

// The DocTypes.
const (
	BulkMessage   = "Platform Bulk Message"
	BulkRecipient = "Platform Bulk Recipient"
	RecipientList = "Platform Recipient List"
)

// Resolver maps the integration's names to the core's rows.
type Resolver interface {
	// AccountFor answers the core account of a Platform Account name; ""
	// means the default outgoing account.
	AccountFor(ctx context.Context, orgID uuid.UUID, platformAccount string) (uuid.UUID, error)
	// TemplateFor answers the core template of a Platform Template name,
	// sendable from the account.
	TemplateFor(ctx context.Context, orgID, accountID uuid.UUID, platformTemplate string) (uuid.UUID, error)
}

// Deps are what the domain is built from.
type Deps struct {
	// DB is the database the framework's documents are in (the projector's
	// transactions).
	DB *gorm.DB
	// Campaigns launches, cancels and retries the bulk messages' campaigns,
	// and answers their progress and sends.
	Campaigns *campaigns.Service
	Resolver  Resolver
	Log       *slog.Logger
}

// Service is the bulk messages domain.
type Service struct {
	db        *gorm.DB
	campaigns *campaigns.Service
	resolver  Resolver
	log       *slog.Logger
	frame     *docframe.Service
}

// New builds the domain. Its hooks and methods go into the framework's
// options (Hooks, Methods); Bind then gives it the framework they built.
func New(d Deps) *Service {
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: d.DB, campaigns: d.Campaigns, resolver: d.Resolver, log: log}
}

// Bind gives the domain the framework, once built (its hooks are among the
// framework's options, so it cannot be given earlier). Call it before
// serving.
func (s *Service) Bind(frame *docframe.Service) { s.frame = frame }

// Hooks are the domain's document hooks, for docframe.Options.Hooks.
func (s *Service) Hooks() []docframe.Hook { return []docframe.Hook{bulkHook{s}, listHook{}} }

// system acts for the integration itself (no permission checks apply to
// what it reads on a user's behalf after checking the user).
var system = docframe.Actor{Email: "Administrator", Role: docframe.RoleAdmin}
