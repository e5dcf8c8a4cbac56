// Package chatbot is the organization's bot: its settings, keyword rules,
// AI contexts and conversation flows, the sessions of contacts walking a
// flow, and the evaluation of every incoming message (an inbound
// consumer): strictly in arrival order per contact, exactly once.
//
// Files: settings.go, rules.go (keyword rules and their matching),
// contexts.go (AI contexts), flows.go (conversation flows), steps.go (the
// step registry and the checks every step shares), step_<kind>.go (each
// step kind: its checks, what it does when reached, how it takes the
// answer), sessions.go (sessions and a contact's session data),
// consumer.go (the inbound consumer and the inbox), evaluate.go (the order
// of evaluation), config.go (the configuration kept in memory under its
// version), state.go (the contact's state in one statement), run.go (walking a flow), ai.go (the model's reply),
// aikey.go (the organization's AI key and where it may go), slots.go (each
// organization's share of the worker for calls to its own servers).
package chatbot

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/ai"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/secrets"
	"wharf/internal/messaging"
	"wharf/internal/transfers"
	"wharf/jobs"
)

// Replier stores the bot's replies in the evaluation's transaction and
// sends them after it (the messaging domain).
type Replier interface {
	QueueReply(ctx context.Context, tx *gorm.DB, orgID, contactID, accountID uuid.UUID, r messaging.Reply) (uuid.UUID, error)
	SendQueued(ctx context.Context, orgID, id uuid.UUID, lastAttempt bool) error
}

// Transfers hands contacts to people (the transfers domain). Whether a
// contact has an active transfer is read with its state (state.go).
type Transfers interface {
	CreateIn(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, in transfers.CreateInput) (uuid.UUID, bool, func(context.Context), error)
}

// Teams names the organization's teams (the teams domain): a flow's
// transfer step may name only one of them.
type Teams interface {
	Names(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error)
}

// Timezones gives an organization's timezone name (business hours).
type Timezones interface {
	Timezone(ctx context.Context, orgID uuid.UUID) (string, error)
}

// AI answers with a model (internal/ai).
type AI interface {
	Reply(ctx context.Context, cfg ai.Config, system string, history []ai.Message) (string, error)
	FetchContexts(ctx context.Context, urls []string) []ai.ContextResult
}

// AIDefaults are the process's model server and key (AI_API_URL,
// AI_API_KEY), for organizations without an ai_base_url of their own. The
// key goes to that server only, never to an organization's ai_base_url.
type AIDefaults struct {
	BaseURL string
	APIKey  string
}

// Service is the chatbot domain.
type Service struct {
	db        *gorm.DB
	box       *secrets.Box
	policy    safehttp.Policy
	http      *http.Client
	replies   Replier
	transfers Transfers
	teams     Teams
	timezones Timezones
	ai        AI
	aiDefault AIDefaults
	slots     *orgSlots
	configs   configCache // each organization's configuration at its version (config.go)
	enq       *jobs.Enqueuer
	log       *slog.Logger
	now       func() time.Time
}

// Deps are the chatbot's collaborators.
type Deps struct {
	DB         *gorm.DB
	Box        *secrets.Box    // seals the AI API key
	Policy     safehttp.Policy // for the URLs the bot calls (AI base URL, api contexts, api_fetch steps)
	Replies    Replier
	Transfers  Transfers
	Teams      Teams
	Timezones  Timezones
	AI         AI
	AIDefaults AIDefaults
	// OrgConcurrency bounds, per organization, the evaluations of this
	// process calling the organization's own servers at once (slots.go);
	// 0: no bound (the api, which evaluates nothing).
	OrgConcurrency int
	Enqueuer       *jobs.Enqueuer
	Log            *slog.Logger
}

// fetchTimeout bounds an api_fetch step's call.
const fetchTimeout = 10 * time.Second

// NewService wires the chatbot domain.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, box: d.Box, policy: d.Policy, http: d.Policy.Client(fetchTimeout), replies: d.Replies,
		transfers: d.Transfers, teams: d.Teams, timezones: d.Timezones, ai: d.AI, aiDefault: d.AIDefaults,
		slots: newOrgSlots(d.OrgConcurrency), enq: d.Enqueuer, log: d.Log, now: func() time.Time { return time.Now().UTC() }}
}

// ConsumerName implements inbound.Consumer.
func (s *Service) ConsumerName() string { return "chatbot" }

// checkURL validates a URL the bot will call (the SSRF-safe client checks
// the address again when it connects).
func (s *Service) checkURL(raw string) error {
	return s.policy.ValidateURL(raw)
}
