// Package wharfbulk is the messaging integration's bulk messages and
// recipient lists: the Platform Bulk Message, Platform Bulk Recipient and
// Platform Recipient List DocTypes of the document framework, their hooks,
// and the wharf.api.bulk_progress, retry_failed and import_recipients
// methods. A bulk message is a core campaign underneath: submitting it
// launches a campaign in the document's transaction, the campaign
// pipeline paces, sends exactly once and tracks statuses, and the document
// follows the campaign (campaigns.Observer). It depends on the
// integration's base (accounts and templates as documents, Platform
// Message) only through Resolver and Recorder, taken at construction.
package wharfbulk

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"wharf/internal/campaigns"
	"wharf/internal/docframe"
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

// Recorder records each accepted send of a bulk message as a Platform
// Message document with bulk_message set. It must record, not send: the
// campaign pipeline sent the message already. Calls are at most once
// (campaigns.Observer).
type Recorder interface {
	RecordBulkSend(ctx context.Context, orgID uuid.UUID, bulkName, to, platformMessageID, status string)
	// BulkSendStatus moves a recorded send's document on to status (never
	// back): a status webhook that reached the campaign while the record
	// was being written found no document to update.
	BulkSendStatus(ctx context.Context, orgID uuid.UUID, platformMessageID, status string)
}

// Deps are what the domain is built from.
type Deps struct {
	Resolver Resolver
	// Recorder may be nil: no Platform Message documents are recorded.
	Recorder Recorder
	Log      *slog.Logger
}

// Service is the bulk messages domain.
type Service struct {
	campaigns *campaigns.Service
	resolver  Resolver
	recorder  Recorder
	// notBulk remembers the campaigns that are no bulk message's (sync.go).
	notBulk     sync.Map
	notBulkSize atomic.Int64
	log         *slog.Logger
	frame       *docframe.Service

	// bulkOf caches campaign id -> bulk message name ("" for a campaign
	// that is no bulk message): a campaign's bulk message never changes.
	bulkOf sync.Map
}

// New builds the domain. Its hooks and methods go into the framework's
// options (Hooks, Methods); Bind then gives it the framework they built.
func New(d Deps) *Service {
	log := d.Log
	if log == nil {
		log = slog.Default()
	}
	return &Service{resolver: d.Resolver, recorder: d.Recorder, log: log}
}

// Bind gives the domain the framework, once built (its hooks are among the
// framework's options, so it cannot be given earlier). Call it before
// serving.
func (s *Service) Bind(frame *docframe.Service) { s.frame = frame }

// BindCampaigns is how campaigns.NewService hands the service the campaigns
// it launches and follows (campaigns.CampaignsBinder): the bulk messages
// observe the campaigns they drive, so each needs the other.
func (s *Service) BindCampaigns(c *campaigns.Service) { s.campaigns = c }

// Hooks are the domain's document hooks, for docframe.Options.Hooks.
func (s *Service) Hooks() []docframe.Hook { return []docframe.Hook{bulkHook{s}, listHook{}} }

// system acts for the integration itself (no permission checks apply to
// what it reads on a user's behalf after checking the user).
var system = docframe.Actor{Email: "Administrator", Role: docframe.RoleAdmin}
