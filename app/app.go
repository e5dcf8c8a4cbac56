// Package app builds each binary's dependency graph from its configuration.
// The mains in cmd/ and the end-to-end tests share it, so tests run exactly
// the wiring that production runs.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/api"
	"wharf/internal/accounts"
	"wharf/internal/calling"
	"wharf/internal/campaigns"
	"wharf/internal/canned"
	"wharf/internal/catalogs"
	"wharf/internal/chatbot"
	"wharf/internal/contacts"
	"wharf/internal/customactions"
	"wharf/internal/dataops"
	"wharf/internal/identity"
	"wharf/internal/inbound"
	"wharf/internal/infra/ai"
	"wharf/internal/infra/audio"
	"wharf/internal/infra/config"
	"wharf/internal/infra/database"
	"wharf/internal/infra/live"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/ratelimit"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/secrets"
	"wharf/internal/infra/storage"
	"wharf/internal/integration/bulk"
	"wharf/internal/integration/docframe"
	"wharf/internal/integration/messages"
	"wharf/internal/integration/notify"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
	"wharf/internal/outbound"
	"wharf/internal/pflows"
	"wharf/internal/teams"
	"wharf/internal/templates"
	"wharf/internal/transfers"
	"wharf/internal/webhooks"
	"wharf/internal/widgets"
	"wharf/jobs"
	"wharf/module"
	"wharf/platform"
	"wharf/scheduler"
	"wharf/worker"
)

// Logger builds the process logger from LOG_LEVEL and LOG_FORMAT.
func Logger(c config.Common) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(strings.ToUpper(c.LogLevel)))
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// closers releases resources in reverse order of acquisition.
type closers []func()

func (cs *closers) add(f func()) { *cs = append(*cs, f) }

func (cs closers) close() {
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

// infra is what every process connects to.
type infra struct {
	DB        *gorm.DB
	Redis     *redis.Client
	AsynqRC   asynq.RedisConnOpt
	Asynq     *asynq.Client
	Inspector *asynq.Inspector
	Enq       *jobs.Enqueuer
}

// newStore builds the file store: S3 when STORAGE_S3_ENDPOINT is set,
// else STORAGE_DIR. With a master key (ENCRYPTION_KEY) and the public URL,
// a local store signs URLs for /api/files with a key derived from it.
func newStore(c config.Storage, master []byte, publicURL string) (storage.Store, error) {
	sc := storage.Config{Dir: c.StorageDir, S3: storage.S3Config{Endpoint: c.S3Endpoint, Bucket: c.S3Bucket,
		AccessKey: c.S3AccessKey, SecretKey: c.S3SecretKey, Region: c.S3Region, UseSSL: c.S3UseSSL}}
	if master != nil {
		sc.SigningKey, sc.PublicURL = storage.DeriveSigningKey(master), publicURL
	}
	store, err := storage.New(sc)
	if err != nil && sc.UsesS3() {
		return nil, fmt.Errorf("STORAGE_S3_ENDPOINT: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("STORAGE_DIR: %w", err)
	}
	return store, nil
}

func connect(ctx context.Context, c config.Common, log *slog.Logger, cs *closers) (*infra, error) {
	db, err := database.Open(ctx, c.DatabaseURL, log)
	if err != nil {
		return nil, err
	}
	cs.add(func() { database.Close(db) })
	ropts, err := redis.ParseURL(c.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(ropts)
	cs.add(func() { _ = rdb.Close() })
	if err := rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("connect to redis: %w", err)
	}
	rc, err := asynq.ParseRedisURI(c.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	client := asynq.NewClient(rc)
	cs.add(func() { _ = client.Close() })
	inspector := asynq.NewInspector(rc)
	cs.add(func() { _ = inspector.Close() })
	return &infra{DB: db, Redis: rdb, AsynqRC: rc, Asynq: client, Inspector: inspector, Enq: jobs.NewEnqueuer(client, inspector)}, nil
}

func (in *infra) ping(ctx context.Context) error {
	if err := database.Ping(ctx, in.DB); err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if err := in.Redis.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// domains are the business services, built the same way for api and worker.
type domains struct {
	Identity  *identity.Service
	Settings  *orgsettings.Service
	Accounts  *accounts.Service
	Contacts  *contacts.Service
	Templates *templates.Service
	Messaging *messaging.Service
	Webhooks  *webhooks.Service
	Inbound   *inbound.Service
	Campaigns *campaigns.Service
	Teams     *teams.Service
	Canned    *canned.Service
	Transfers *transfers.Service
	Chatbot   *chatbot.Service
	Flows     *pflows.Service
	DataOps   *dataops.Service
	Actions   *customactions.Service
	Catalogs  *catalogs.Service
	Widgets   *widgets.Service
	Calling   *calling.Service
	Frame     *docframe.Service
	Wharf     *messages.Service
	Bulk      *bulk.Service
	Notify    *notify.Service
	// Live publishes the event stream's events (GET /api/events); the
	// api also subscribes through it.
	Live *live.Bus
}

// buildDomains builds the domain services of a process. orgSlots is the
// worker's bound per organization on chatbot evaluations calling the
// organization's own servers (0 in the api, which evaluates nothing).
func buildDomains(in *infra, pc config.Platform, cc config.Campaigns, ac config.AI, orgSlots int, callc config.Calling, store storage.Store,
	box *secrets.Box, ids *identity.Service, settings *orgsettings.Service, m *metrics.Set, log *slog.Logger) (*domains, error) {
	policy := safehttp.Policy{AllowPrivate: pc.OutboundAllowPrivate}
	provider := platform.New(pc.PlatformAPIURL, pc.PlatformAPIVersion, nil)
	d := &domains{Identity: ids, Settings: settings, Live: live.NewBus(in.Redis, log)}
	d.Webhooks = webhooks.NewService(in.DB, box, in.Enq, policy, m, log, webhooks.WithListenerCache(in.Redis, principalMaxAge, log))
	d.Accounts = accounts.NewService(in.DB, box, provider, settings, in.Enq, log)
	d.Contacts = contacts.NewService(in.DB, d.Webhooks, d.Live, ids)
	d.Templates = templates.NewService(in.DB, d.Accounts, provider, in.Enq, log)
	// Every message leaves through one sender: one budget per account in
	// Redis paces replies, API sends and campaigns together; marketing
	// templates skip contacts who opted out (outbound's first rule).
	sender := outbound.New(outbound.Deps{Provider: provider, Limiter: ratelimit.New(in.Redis), Accounts: d.Accounts, Metrics: m,
		OptOuts: d.Contacts, Log: log})
	d.Teams = teams.NewService(in.DB, ids)
	d.Transfers = transfers.NewService(transfers.Deps{DB: in.DB, Events: d.Webhooks, Live: d.Live, Contacts: d.Contacts, People: ids, Teams: d.Teams})
	d.Messaging = messaging.NewService(messaging.Deps{DB: in.DB, Accounts: d.Accounts, Contacts: d.Contacts, Templates: d.Templates,
		Webhooks: d.Webhooks, Provider: provider, Sender: sender, Enqueuer: in.Enq, Policy: policy, Live: d.Live, Holders: d.Transfers, Keywords: settings, Store: store, Log: log})
	d.Flows = pflows.NewService(in.DB, d.Accounts, provider)
	// A projected campaign (a bulk message's) records its changes in the
	// events outbox for the bulk messages' projector (bulk).
	d.Campaigns = campaigns.NewService(campaigns.Deps{DB: in.DB, Accounts: d.Accounts, Templates: d.Templates, Sender: sender,
		Enqueuer: in.Enq, Metrics: m, Log: log, Outbox: d.Webhooks, OptOuts: d.Contacts, Audiences: d.Contacts, Timezones: settings, Live: d.Live, Tests: campaignTests{d.Messaging}, Config: campaigns.Config{Lanes: cc.Lanes,
			CounterInterval: cc.CounterInterval, SendingTimeout: cc.SendingTimeout, StallAfter: cc.StallAfter}})
	// The messaging integration's base, and its bulk messages, which are
	// campaigns underneath: they resolve their Platform Account and
	// Template Links to core rows through messages (bulkResolver).
	d.Wharf = messages.New(messages.Deps{DB: in.DB, Accounts: d.Accounts, Contacts: d.Contacts, Templates: d.Templates,
		Messaging: d.Messaging, Flows: d.Flows, Settings: settings, Webhooks: d.Webhooks, Enqueuer: in.Enq, ProviderURL: pc.PlatformAPIURL, Log: log})
	d.Bulk = bulk.New(bulk.Deps{DB: in.DB, Campaigns: d.Campaigns, Log: log,
		Resolver: bulkResolver{wharf: d.Wharf, core: bulk.CoreResolver{Accounts: d.Accounts, Templates: d.Templates}}})
	d.Canned = canned.NewService(in.DB, d.Contacts, settings)
	d.Chatbot = chatbot.NewService(chatbot.Deps{DB: in.DB, Box: box, Policy: policy, Replies: d.Messaging, Transfers: d.Transfers,
		Teams: d.Teams, Timezones: settings, Enqueuer: in.Enq, Log: log,
		AI: ai.New(policy, ac.AITimeout), AIDefaults: chatbot.AIDefaults{BaseURL: ac.AIAPIURL, APIKey: ac.AIAPIKey}, OrgConcurrency: orgSlots})
	d.DataOps = dataops.NewService(dataops.Deps{DB: in.DB, Maskers: settings, Contacts: d.Contacts, Members: ids, Enqueuer: in.Enq, Live: d.Live, Log: log})
	d.Actions = customactions.NewService(customactions.Deps{DB: in.DB, Redis: in.Redis, Contacts: d.Contacts, Settings: settings,
		Policy: policy, Log: log})
	d.Catalogs = catalogs.NewService(in.DB, d.Accounts, provider)
	d.Widgets = widgets.NewService(in.DB, settings)
	d.Calling = calling.NewService(calling.Deps{DB: in.DB, Redis: in.Redis, Accounts: d.Accounts, Contacts: d.Contacts, People: ids, Teams: d.Teams, Settings: settings, Live: d.Live,
		Messages: d.Messaging, Store: store, Provider: provider, Log: log,
		Config: calling.Config{STUNURLs: callc.STUNURLs, TURNURLs: callc.TURNURLs, TURNSecret: callc.TURNSecret, TURNTTL: callc.TURNTTL,
			MaxInFlight: callc.ControlMaxInFlight}})
	var err error
	// The document framework and the messaging integration's packages:
	// their hooks, methods, built-in DocTypes and event subscribers are
	// given to the framework, which binds itself to them (docframe.Binder,
	// through docframe.EventSinks).
	// Notifications send through messages.
	// DocType definitions and the lookup of an event's notifications are
	// cached in every process (each one writes DocTypes or notifications
	// too, and replaces their versions in Redis); the maximum age only
	// bounds a lost invalidation.
	d.Notify = notify.New(notify.Deps{DB: in.DB, Enqueuer: in.Enq, Sender: notifySender{d.Wharf}, Files: store, Log: log,
		Redis: in.Redis, CacheMaxAge: principalMaxAge})
	if d.Frame, err = docframe.New(in.DB, box, docframe.Options{Log: log, Redis: in.Redis, CacheMaxAge: principalMaxAge,
		Hooks:   slices.Concat(d.Wharf.Hooks(), d.Bulk.Hooks(), []docframe.Hook{d.Notify}),
		Methods: slices.Concat(d.Wharf.Methods(), d.Bulk.Methods()), BuiltIn: builtInDocTypes(d.Wharf, d.Notify, d.Bulk),
		BuiltInNames: builtInDocTypeNames,
		Guards:       slices.Concat(messages.Guards(), bulk.Guards(), notify.Guards()), Enqueuer: in.Enq,
		Events: docframe.EventSinks{d.Wharf, d.Bulk, d.Notify}}); err != nil {
		return nil, err
	}
	d.Inbound, err = inbound.NewService(inbound.Deps{DB: in.DB, Accounts: d.Accounts, Contacts: d.Contacts,
		Webhooks: d.Webhooks, Enqueuer: in.Enq, Limiter: ratelimit.New(in.Redis), GlobalSecret: pc.PlatformAppSecret, Log: log,
		// The consumers are the modules' (inbound does not exist yet: the
		// list is built without it), in the order of the modules.
		Metrics: m, Consumers: module.Consumers(modules(d, cc, apiParts{}))})
	return d, err
}

// API is the assembled api process.
type API struct {
	Handler http.Handler
	Server  *api.Server
	// Services are the domain services behind the handlers, for tests that
	// call them directly (the sweeps).
	Services *domains
	DB       *gorm.DB
	Redis    *redis.Client
	// MetricsAddr is the address /metrics is served on (METRICS_ADDR, its
	// port resolved), "" when it is off.
	MetricsAddr string
	closers     closers
	streams     *live.Slots
}

// Close releases the api's connections.
func (a *API) Close() { a.closers.close() }

// Drain ends the event streams (GET /api/events) and refuses new ones:
// http.Server.Shutdown waits for every open request, and a stream would
// otherwise hold it until its timeout. Give it to RegisterOnShutdown.
func (a *API) Drain() {
	if a.streams != nil {
		a.streams.Drain()
	}
}

// Migrate creates the database if needed and applies pending migrations.
func Migrate(ctx context.Context, dsn string, log *slog.Logger) error {
	if err := database.EnsureDatabase(ctx, dsn); err != nil {
		return err
	}
	return database.Migrate(ctx, dsn, log)
}

// principalMaxAge bounds how long the api uses a cached principal (or
// masker) without reading it again, should a change's invalidation in Redis
// have been lost (its process died between the commit and the write to
// Redis).
const principalMaxAge = 10 * time.Second

// NewAPI migrates, connects, bootstraps the first admin when there is no user
// yet, builds the HTTP handler and starts the metrics listener when
// METRICS_ADDR is set.
func NewAPI(ctx context.Context, c config.API, log *slog.Logger) (_ *API, err error) {
	a := &API{}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if err := Migrate(ctx, c.DatabaseURL, log); err != nil {
		return nil, err
	}
	in, err := connect(ctx, c.Common, log, &a.closers)
	if err != nil {
		return nil, err
	}
	box, err := secrets.New(c.EncryptionKey)
	if err != nil {
		return nil, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	// The api signs local file URLs, which it serves itself (/api/files).
	store, err := newStore(c.Storage, c.EncryptionKey, c.PublicURL)
	if err != nil {
		return nil, err
	}
	// ffmpeg serves one endpoint: without it the api starts, says so once
	// here and in /readyz, and answers audio uploads 503.
	transcoder, err := audio.NewTranscoder(c.FFmpegPath)
	if err != nil {
		log.Warn("audio uploads are disabled", "error", err)
	}
	// Principals are cached in process, exact across replicas through
	// versions in Redis; the maximum age only bounds a lost invalidation.
	ids := identity.NewService(in.DB, identity.NewTokens(c.JWTSecret, c.AccessTokenTTL, c.RefreshTokenTTL), in.Enq, log,
		identity.WithPrincipalCache(in.Redis, principalMaxAge))
	created, err := ids.Bootstrap(ctx, identity.BootstrapInput{Email: c.BootstrapAdminEmail, Password: c.BootstrapAdminPassword, OrgName: c.BootstrapOrgName})
	if err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	if created {
		log.Info("created the bootstrap admin and organization", "email", c.BootstrapAdminEmail, "organization", c.BootstrapOrgName)
	}
	mon := asynqmon.New(asynqmon.Options{RootPath: "/monitoring", RedisConnOpt: in.AsynqRC})
	a.closers.add(func() { _ = mon.Close() })
	a.DB, a.Redis = in.DB, in.Redis
	m := metrics.New()
	d, err := buildDomains(in, c.Platform, c.Campaigns, c.AI, 0, c.Calling, store, box, ids, orgsettings.NewService(in.DB, box, store, transcoder,
		orgsettings.WithMaskerCache(in.Redis, principalMaxAge, log), orgsettings.WithKeywordCache(in.Redis, principalMaxAge, log)), m, log)
	if err != nil {
		return nil, err
	}
	d.Inbound.SetVerifyToken(c.PlatformWebhookVerifyToken)
	a.Services = d
	a.closers.add(func() { _ = d.Live.Close() })
	a.streams = live.NewSlots(in.Redis, c.EventStreamsMax)
	// Built-in DocTypes stored by an older version are brought up to date
	// before the api serves, so that no save is checked against an old
	// definition (a few statements per organization that uses the
	// integration; replicas starting together are harmless: it is
	// idempotent). A failure is logged and the next start tries again.
	if n, err := d.UpgradeWharfDocTypes(ctx); err != nil {
		log.Warn("cannot upgrade the integration's DocTypes; the next start tries again", "error", err)
	} else {
		log.Debug("the integration's DocTypes are up to date", "organizations", n)
	}
	limiter := ratelimit.New(in.Redis)
	a.Server = api.New(api.Deps{
		Config: api.Config{
			RateLimitPerMinute: c.RateLimitPerMinute, RateLimitBulkPerMinute: c.RateLimitBulkPerMinute,
			TrustedProxies: c.TrustedProxies, MonitoringUser: c.MonitoringUser, MonitoringPassword: c.MonitoringPassword,
			PublicURL: c.PublicURL, SignupScriptURL: c.EmbeddedSignupScriptURL, SignupOrigins: c.EmbeddedSignupOrigins,
		},
		Log: log, Limiter: limiter, Identity: ids, Monitoring: mon, Metrics: m,
		Ready: api.Readiness{
			Database:     func(ctx context.Context) error { return database.Ping(ctx, in.DB) },
			Redis:        func(ctx context.Context) error { return in.Redis.Ping(ctx).Err() },
			AudioEnabled: d.Settings.AudioEnabled,
		},
		Modules: modules(d, c.Campaigns, apiParts{config: c, limiter: limiter, streams: a.streams, store: store}),
	})
	a.Handler = a.Server.Handler()
	addr, stop, err := ServeOps(c.MetricsAddr, log, nil, m, c.Pprof)
	if err != nil {
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}
	a.MetricsAddr = addr
	a.closers.add(stop)
	return a, nil
}

// Worker is the assembled worker process: one asynq server for everything
// but campaigns, and one with its own pool for campaign lanes, so that a big
// campaign never takes the slots of replies and inbound processing.
type Worker struct {
	Server         *asynq.Server
	CampaignServer *asynq.Server
	Mux            *asynq.ServeMux
	// HealthAddr is the address /healthz and /metrics are served on
	// (HEALTH_ADDR, its port resolved), "" when it is off.
	HealthAddr string
	infra      *infra
	closers    closers
}

// Run processes jobs until ctx ends, then shuts both servers down.
func (w *Worker) Run(ctx context.Context) error {
	errc := make(chan error, 2)
	for _, srv := range []*asynq.Server{w.Server, w.CampaignServer} {
		go func() { errc <- worker.Run(ctx, srv, w.Mux) }()
	}
	return errors.Join(<-errc, <-errc)
}

// Ping checks the worker's connections, for its health endpoint.
func (w *Worker) Ping(ctx context.Context) error { return w.infra.ping(ctx) }

// Close releases the worker's connections.
func (w *Worker) Close() { w.closers.close() }

// NewWorker connects, registers every job handler and starts the health
// and metrics listener when HEALTH_ADDR is set.
func NewWorker(ctx context.Context, c config.Worker, log *slog.Logger) (_ *Worker, err error) {
	w := &Worker{}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	in, err := connect(ctx, c.Common, log, &w.closers)
	if err != nil {
		return nil, err
	}
	w.infra = in
	box, err := secrets.New(c.EncryptionKey)
	if err != nil {
		return nil, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	// The worker signs links too: documents' prints sent by notifications
	// are fetched by the provider from the api's /api/files.
	store, err := newStore(c.Storage, c.EncryptionKey, c.PublicURL)
	if err != nil {
		return nil, err
	}
	ids := identity.NewService(in.DB, nil, nil, log)
	m := metrics.New()
	m.WatchQueues(in.Inspector)
	// The worker hands out no ICE servers: the calling configuration is
	// the api's and the call bridge's.
	d, err := buildDomains(in, c.Platform, c.Campaigns, c.AI, c.ChatbotOrgSlots(), config.Calling{}, store, box, ids, orgsettings.NewService(in.DB, box, store, nil,
		orgsettings.WithKeywordCache(in.Redis, principalMaxAge, log)), m, log)
	if err != nil {
		return nil, err
	}
	// The processes notification conditions run in (bin/worker
	// eval-conditions), started on first use.
	w.closers.add(d.Notify.Close)
	w.Server = worker.NewServer(in.AsynqRC, worker.Options{Concurrency: c.Concurrency, ShutdownTimeout: c.ShutdownTimeout,
		TaskCheckInterval: c.TaskCheckInterval}, log)
	w.CampaignServer = worker.NewServer(in.AsynqRC, worker.Options{Concurrency: c.CampaignConcurrency, ShutdownTimeout: c.ShutdownTimeout,
		Queues: map[string]int{jobs.QueueCampaigns: 1}, TaskCheckInterval: c.TaskCheckInterval}, log)
	w.Mux = worker.NewMux(log, m)
	worker.Register(w.Mux, module.Jobs(modules(d, c.Campaigns, apiParts{})))
	addr, stop, err := ServeOps(c.HealthAddr, log, w.Ping, m, c.Pprof)
	if err != nil {
		return nil, fmt.Errorf("HEALTH_ADDR: %w", err)
	}
	w.HealthAddr = addr
	w.closers.add(stop)
	return w, nil
}

// Scheduler is the assembled scheduler process.
type Scheduler struct {
	*scheduler.Scheduler
	// HealthAddr is the address /healthz and /metrics are served on
	// (HEALTH_ADDR, its port resolved), "" when it is off.
	HealthAddr string
	infra      *infra
	closers    closers
}

// Ping checks the scheduler's connections, for its health endpoint.
func (s *Scheduler) Ping(ctx context.Context) error { return s.infra.ping(ctx) }

// Close releases the scheduler's connections.
func (s *Scheduler) Close() { s.closers.close() }

// NewScheduler connects, loads the default entries and starts the health
// and metrics listener when HEALTH_ADDR is set.
func NewScheduler(ctx context.Context, c config.Scheduler, log *slog.Logger) (_ *Scheduler, err error) {
	s := &Scheduler{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	in, err := connect(ctx, c.Common, log, &s.closers)
	if err != nil {
		return nil, err
	}
	s.infra = in
	m := metrics.New()
	// The scheduler builds no service: the modules' schedules need none.
	s.Scheduler = scheduler.New(in.Redis, in.Enq, log, c.LeaderTTL, module.Schedules(modules(&domains{}, c.Campaigns, apiParts{})), m)
	addr, stop, err := ServeOps(c.HealthAddr, log, s.Ping, m, c.Pprof)
	if err != nil {
		return nil, fmt.Errorf("HEALTH_ADDR: %w", err)
	}
	s.HealthAddr = addr
	s.closers.add(stop)
	return s, nil
}

// PingRedis checks that the Redis at url answers.
func PingRedis(ctx context.Context, url string) error {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	return rdb.Ping(ctx).Err()
}
