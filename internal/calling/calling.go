// Package calling is the voice-call domain: call logs and call transfers,
// the organization-scoped reads of the api, the calls webhook consumer, and
// the routing of call-control requests (connect, hold, resume, hangup,
// transfer, outgoing calls) to the callbridge process that owns a call's
// media. The media itself (pion peer connections, the RTP relay, players,
// recorder) lives in callbridge/; this package never touches a packet.
package calling

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/live"
	"wharf/internal/orgsettings"
	"wharf/internal/teams"
	"wharf/models"
	"wharf/platform"
)

// Accounts is what calling uses of the accounts domain.
type Accounts interface {
	Get(ctx context.Context, orgID, id uuid.UUID) (*accounts.Account, error)
	ByName(ctx context.Context, orgID uuid.UUID, name string) (*accounts.Account, error)
	IDNamed(ctx context.Context, orgID uuid.UUID, name string) (uuid.UUID, error)
}

// Contacts finds or creates the contact of a caller, and reads the
// contacts of a page of call logs (db: the caller's pool or transaction).
type Contacts interface {
	FindOrCreate(ctx context.Context, orgID uuid.UUID, rawNumber string, accountID *uuid.UUID) (*models.Contact, error)
	Contact(ctx context.Context, orgID, id uuid.UUID) (*models.Contact, error)
	ContactsIn(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.Contact, error)
}

// People reads the organization's users (the identity domain): the call
// logs' agents' names.
type People interface {
	Users(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.User, error)
}

// Teams owns the teams a call is transferred to (the teams domain): their
// members, strategy and turns. The methods ending in In take the call's
// transaction.
type Teams interface {
	StrategyIn(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID) (string, error)
	NextAgentIn(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID, strategy string, loads teams.Loads) (uuid.UUID, error)
	AssignedIn(ctx context.Context, tx *gorm.DB, orgID, teamID, userID uuid.UUID, at time.Time) error
	IsTeamMember(ctx context.Context, orgID, teamID, userID uuid.UUID) (bool, error)
}

// Settings reads an organization's calling settings and its audio files.
type Settings interface {
	Get(ctx context.Context, orgID uuid.UUID) (string, orgsettings.Settings, error)
	OpenAudio(ctx context.Context, orgID uuid.UUID, name string) (io.ReadCloser, error)
}

// Messages sends the interactive call-permission request.
type Messages interface {
	SendCallPermissionRequest(ctx context.Context, orgID, contactID, accountID uuid.UUID, body string) (uuid.UUID, error)
}

// Store keeps recordings: the local directory (URLs signed with an HMAC and
// served by the api) or S3-compatible object storage (presigned URLs).
type Store interface {
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// SignedURL is a URL that serves the object without credentials until
	// the returned expiry, at most ttl from now.
	SignedURL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error)
}

// Config is the calling configuration shared by api and callbridge.
type Config struct {
	STUNURLs   []string      // STUN_URLS
	TURNURLs   []string      // TURN_URLS
	TURNSecret string        // TURN_SECRET (coturn's static-auth-secret)
	TURNTTL    time.Duration // TURN_TTL, at most 7 days
	// ControlTimeout bounds how long the api waits for a callbridge's reply.
	ControlTimeout time.Duration
	// OutgoingWait bounds how long POST /api/calls/outgoing waits for the
	// callee to pick up.
	OutgoingWait time.Duration
	// MaxInFlight bounds an organization's control requests waiting for a
	// callbridge at once (DefaultMaxInFlight when 0).
	MaxInFlight int
}

// DefaultMaxInFlight is Config.MaxInFlight when none is configured.
const DefaultMaxInFlight = 16

// Deps are the calling service's collaborators.
type Deps struct {
	DB       *gorm.DB
	Redis    *redis.Client
	Accounts Accounts
	Contacts Contacts
	People   People
	Teams    Teams
	Settings Settings
	Messages Messages
	Store    Store
	Provider *platform.Client
	Config   Config
	// Live publishes the event stream's call events (nil: none).
	Live live.Publisher
	Log  *slog.Logger
}

// Service is the calling domain.
type Service struct {
	db       *gorm.DB
	rdb      *redis.Client
	accounts Accounts
	contacts Contacts
	people   People
	teams    Teams
	settings Settings
	messages Messages
	store    Store
	provider *platform.Client
	cfg      Config
	live     live.Publisher
	log      *slog.Logger
}

// NewService builds the calling service.
func NewService(d Deps) *Service {
	if d.Config.ControlTimeout <= 0 {
		d.Config.ControlTimeout = 10 * time.Second
	}
	if d.Config.OutgoingWait <= 0 {
		d.Config.OutgoingWait = 30 * time.Second
	}
	if d.Config.MaxInFlight <= 0 {
		d.Config.MaxInFlight = DefaultMaxInFlight
	}
	return &Service{db: d.DB, rdb: d.Redis, accounts: d.Accounts, contacts: d.Contacts, people: d.People, teams: d.Teams, settings: d.Settings,
		messages: d.Messages, store: d.Store, provider: d.Provider, cfg: d.Config, live: live.Or(d.Live), log: d.Log}
}
