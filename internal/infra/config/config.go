// Package config reads each binary's settings from environment variables.
//
// Every binary has its own struct so that a worker does not demand an HTTP
// address and the scheduler does not demand an encryption key. Values that
// would be unsafe to default (signing and encryption keys, the bootstrap
// password) have no default: `make run` generates them into a git-ignored
// file, and a production deployment must set them.
package config

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// Common holds what every binary needs.
type Common struct {
	DatabaseURL string `env:"DATABASE_URL" envDefault:"postgres://postgres@127.0.0.1:5432/wharf?sslmode=disable"`
	RedisURL    string `env:"REDIS_URL" envDefault:"redis://127.0.0.1:6379/0"`
	LogLevel    string `env:"LOG_LEVEL" envDefault:"info"`
	LogFormat   string `env:"LOG_FORMAT" envDefault:"text"`
	// ShutdownTimeout bounds how long a binary waits for in-flight work after SIGTERM.
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT" envDefault:"30s"`
	// HealthAddr, when set, makes the worker and scheduler answer GET
	// /healthz and GET /metrics on this address (the api serves /healthz on
	// HTTP_ADDR and /metrics on METRICS_ADDR).
	HealthAddr string `env:"HEALTH_ADDR"`
	// Pprof adds Go's profiler (/debug/pprof/) to the operator listener
	// (METRICS_ADDR for the api, HEALTH_ADDR for the others): off by
	// default; the benchmarks switch it on to profile the processes.
	Pprof bool `env:"PPROF_ENABLED"`
}

// Secrets holds the keys that protect data at rest; api and worker need them.
type Secrets struct {
	// EncryptionKey is the raw 32-byte AES-256 key, decoded from hex or base64.
	EncryptionKey    []byte `env:"-"`
	EncryptionKeyRaw string `env:"ENCRYPTION_KEY,required,notEmpty"`
}

// Storage is where files (hold music, recordings) are kept: a local
// directory, or an S3-compatible bucket when STORAGE_S3_ENDPOINT is set.
// api and worker read it; so does any process that writes recordings.
// Local signed URLs are signed with a key derived from ENCRYPTION_KEY
// (storage.DeriveSigningKey), so there is no signing variable here.
type Storage struct {
	StorageDir string `env:"STORAGE_DIR" envDefault:"./data/storage"`
	// S3Endpoint is host[:port], without a scheme; empty keeps files in
	// STORAGE_DIR.
	S3Endpoint  string `env:"STORAGE_S3_ENDPOINT"`
	S3Bucket    string `env:"STORAGE_S3_BUCKET"`
	S3AccessKey string `env:"STORAGE_S3_ACCESS_KEY"`
	S3SecretKey string `env:"STORAGE_S3_SECRET_KEY"`
	// S3Region is never looked up (that would cost a request before the
	// first upload and before signing any URL).
	S3Region string `env:"STORAGE_S3_REGION" envDefault:"us-east-1"`
	S3UseSSL bool   `env:"STORAGE_S3_USE_SSL" envDefault:"true"`
}

func (s Storage) validate() []error {
	if s.S3Endpoint == "" {
		if s.StorageDir == "" {
			return []error{errors.New("STORAGE_DIR must not be empty")}
		}
		return nil
	}
	var errs []error
	if strings.Contains(s.S3Endpoint, "://") || strings.ContainsAny(s.S3Endpoint, "/?#") {
		errs = append(errs, errors.New("STORAGE_S3_ENDPOINT must be host[:port] without a scheme or path (STORAGE_S3_USE_SSL chooses https)"))
	}
	for name, v := range map[string]string{"STORAGE_S3_BUCKET": s.S3Bucket, "STORAGE_S3_ACCESS_KEY": s.S3AccessKey,
		"STORAGE_S3_SECRET_KEY": s.S3SecretKey, "STORAGE_S3_REGION": s.S3Region} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s must be set with STORAGE_S3_ENDPOINT", name))
		}
	}
	return errs
}

// Platform is how api and worker reach the provider and user endpoints.
type Platform struct {
	PlatformAPIURL     string `env:"PLATFORM_API_URL" envDefault:"http://127.0.0.1:8090"`
	PlatformAPIVersion string `env:"PLATFORM_API_VERSION" envDefault:"v21.0"`
	// PlatformAppSecret verifies inbound webhooks of accounts whose
	// organization has no provider_app_secret of its own.
	PlatformAppSecret string `env:"PLATFORM_APP_SECRET"`
	// OutboundAllowPrivate lets outbound webhooks and media checks reach
	// loopback and private addresses (self-hosted setups, tests).
	OutboundAllowPrivate bool `env:"OUTBOUND_ALLOW_PRIVATE" envDefault:"false"`
}

func (p Platform) validate() []error {
	var errs []error
	if err := httpURL(p.PlatformAPIURL); err != nil {
		errs = append(errs, fmt.Errorf("PLATFORM_API_URL %w", err))
	}
	if !strings.HasPrefix(p.PlatformAPIVersion, "v") {
		errs = append(errs, errors.New("PLATFORM_API_VERSION must look like v21.0"))
	}
	return errs
}

// AI holds the defaults of the chatbot's AI replies; api and worker read it.
type AI struct {
	// AIAPIURL is the model server's base URL for organizations without an
	// ai_base_url of their own ("" = the provider's API). Like those, it
	// goes through the SSRF-safe client: a model server on the internal
	// network needs OUTBOUND_ALLOW_PRIVATE.
	AIAPIURL string `env:"AI_API_URL"`
	// AIAPIKey is the key for organizations without an ai_api_key.
	AIAPIKey string `env:"AI_API_KEY"`
	// AITimeout bounds one model request; the chatbot answers with its
	// fallback message past it.
	AITimeout time.Duration `env:"AI_TIMEOUT" envDefault:"20s"`
}

func (a AI) validate() []error {
	var errs []error
	if a.AIAPIURL != "" {
		if err := httpURL(a.AIAPIURL); err != nil {
			errs = append(errs, fmt.Errorf("AI_API_URL %w", err))
		}
	}
	if a.AITimeout < time.Second {
		errs = append(errs, errors.New("AI_TIMEOUT must be at least 1s"))
	}
	return errs
}

// Campaigns tunes the sending pipeline; api, worker and scheduler read it.
type Campaigns struct {
	// Lanes is how many send loops one campaign runs in parallel.
	Lanes int `env:"CAMPAIGN_LANES" envDefault:"8"`
	// CounterInterval is how often a running campaign's counters are
	// recomputed from its recipients (one write per interval, not one per
	// status).
	CounterInterval time.Duration `env:"CAMPAIGN_COUNTER_INTERVAL" envDefault:"1s"` // rounded up to whole seconds
	// SendingTimeout: a recipient claimed for longer without an answer
	// (its worker died) gets status unknown.
	SendingTimeout time.Duration `env:"CAMPAIGN_SENDING_TIMEOUT" envDefault:"2m"`
	// StallAfter: a sending campaign with pending recipients and no claim for
	// this long gets fresh lanes.
	StallAfter time.Duration `env:"CAMPAIGN_STALL_AFTER" envDefault:"1m"`
	// SweepInterval is how often the scheduler runs the campaign sweep.
	SweepInterval time.Duration `env:"CAMPAIGN_SWEEP_INTERVAL" envDefault:"30s"`
}

func (c Campaigns) validate() []error {
	var errs []error
	if c.Lanes < 1 || c.Lanes > 256 {
		errs = append(errs, errors.New("CAMPAIGN_LANES must be between 1 and 256"))
	}
	for name, d := range map[string]time.Duration{"CAMPAIGN_COUNTER_INTERVAL": c.CounterInterval, "CAMPAIGN_SENDING_TIMEOUT": c.SendingTimeout,
		"CAMPAIGN_STALL_AFTER": c.StallAfter, "CAMPAIGN_SWEEP_INTERVAL": c.SweepInterval} {
		if d < 100*time.Millisecond {
			errs = append(errs, fmt.Errorf("%s must be at least 100ms", name))
		}
	}
	return errs
}

// Calling holds the ICE servers handed to browsers (GET
// /api/calls/ice-servers) and used by the call bridge; api and callbridge
// read it.
type Calling struct {
	// STUNURLs are public STUN servers (stun: or stuns: URLs).
	STUNURLs []string `env:"STUN_URLS" envSeparator:"," envDefault:"stun:stun.l.google.com:19302"`
	// TURNURLs are the relays (turn: or turns: URLs) whose REST-API
	// credentials are derived from TURNSecret (coturn's
	// static-auth-secret); both or neither.
	TURNURLs   []string `env:"TURN_URLS" envSeparator:","`
	TURNSecret string   `env:"TURN_SECRET"`
	// TURNTTL is how long one set of TURN credentials stays valid.
	TURNTTL time.Duration `env:"TURN_TTL" envDefault:"24h"`
	// ControlMaxInFlight bounds an organization's call-control requests
	// waiting for a callbridge at once, across api replicas.
	ControlMaxInFlight int `env:"CALL_CONTROL_MAX_IN_FLIGHT" envDefault:"16"`
}

// MaxTURNTTL bounds TURN_TTL: credentials handed to a browser must not
// outlive a week.
const MaxTURNTTL = 7 * 24 * time.Hour

func (c Calling) validate() []error {
	var errs []error
	if c.ControlMaxInFlight < 1 || c.ControlMaxInFlight > 1000 {
		errs = append(errs, errors.New("CALL_CONTROL_MAX_IN_FLIGHT must be between 1 and 1000"))
	}
	if len(c.STUNURLs) == 0 {
		errs = append(errs, errors.New("STUN_URLS must list at least one stun: URL"))
	}
	for _, u := range c.STUNURLs {
		if !strings.HasPrefix(u, "stun:") && !strings.HasPrefix(u, "stuns:") {
			errs = append(errs, fmt.Errorf("STUN_URLS: %q must start with stun: or stuns:", u))
		}
	}
	for _, u := range c.TURNURLs {
		if !strings.HasPrefix(u, "turn:") && !strings.HasPrefix(u, "turns:") {
			errs = append(errs, fmt.Errorf("TURN_URLS: %q must start with turn: or turns:", u))
		}
	}
	if (len(c.TURNURLs) == 0) != (c.TURNSecret == "") {
		errs = append(errs, errors.New("TURN_URLS and TURN_SECRET must be set together"))
	}
	if c.TURNTTL <= 0 || c.TURNTTL > MaxTURNTTL {
		errs = append(errs, errors.New("TURN_TTL must be positive and at most 168h (7 days)"))
	}
	return errs
}

// API configures bin/api.
type API struct {
	Common
	Secrets
	Storage
	Platform
	Campaigns
	AI
	Calling
	HTTPAddr string `env:"HTTP_ADDR" envDefault:":8080"`
	// MetricsAddr, when set, is where the api serves GET /metrics, a
	// listener of its own: the metrics are not public on HTTP_ADDR.
	MetricsAddr    string   `env:"METRICS_ADDR"`
	PublicURL      string   `env:"PUBLIC_URL" envDefault:"http://localhost:8080"`
	JWTSecret      string   `env:"JWT_SECRET,required,notEmpty"`
	TrustedProxies []string `env:"TRUSTED_PROXIES" envSeparator:","`

	AccessTokenTTL  time.Duration `env:"ACCESS_TOKEN_TTL" envDefault:"1h"`
	RefreshTokenTTL time.Duration `env:"REFRESH_TOKEN_TTL" envDefault:"168h"`

	// HTTPReadTimeout bounds reading a whole request, body included (a
	// 32 MB recipients import at 270 kB/s); HTTPWriteTimeout runs from the
	// end of the headers to the end of the answer, so it also covers reading
	// the body and must not be shorter. Streaming answers lift it.
	HTTPReadTimeout  time.Duration `env:"HTTP_READ_TIMEOUT" envDefault:"2m"`
	HTTPWriteTimeout time.Duration `env:"HTTP_WRITE_TIMEOUT" envDefault:"3m"`
	HTTPIdleTimeout  time.Duration `env:"HTTP_IDLE_TIMEOUT" envDefault:"2m"`

	RateLimitPerMinute     int `env:"RATE_LIMIT_PER_MINUTE" envDefault:"100"`
	RateLimitBulkPerMinute int `env:"RATE_LIMIT_BULK_PER_MINUTE" envDefault:"10"`

	// PlatformWebhookVerifyToken answers the provider's verification
	// handshake before any account (with its own verify token) exists.
	PlatformWebhookVerifyToken string `env:"PLATFORM_WEBHOOK_VERIFY_TOKEN"`

	// EmbeddedSignupScriptURL is the provider's embedded-signup script: the
	// one script from another origin the console loads, on its embedded
	// signup page only (/console/accounts/signup, whose Content-Security-
	// Policy allows this origin; every other page keeps the strict one).
	// Tests point it at the simulator's stand-in.
	EmbeddedSignupScriptURL string `env:"EMBEDDED_SIGNUP_SCRIPT_URL" envDefault:"https://connect.facebook.net/en_US/sdk.js"`
	// EmbeddedSignupOrigins are the other origins the script opens frames
	// of and talks to, allowed on that page only.
	EmbeddedSignupOrigins []string `env:"EMBEDDED_SIGNUP_ORIGINS" envSeparator:"," envDefault:"https://www.facebook.com,https://web.facebook.com"`

	BootstrapAdminEmail    string `env:"BOOTSTRAP_ADMIN_EMAIL" envDefault:"admin@wharf.local"`
	BootstrapAdminPassword string `env:"BOOTSTRAP_ADMIN_PASSWORD"`
	BootstrapOrgName       string `env:"BOOTSTRAP_ORG_NAME" envDefault:"Wharf"`

	// MonitoringUser and MonitoringPassword are an optional operator credential
	// for the asynq UI, for operators who are not super admins of the product.
	MonitoringUser     string `env:"MONITORING_USER"`
	MonitoringPassword string `env:"MONITORING_PASSWORD"`

	FFmpegPath string `env:"FFMPEG_PATH" envDefault:"ffmpeg"`

	// ImportWait is how long POST /api/import waits for the worker's result
	// before answering 202 with the job's progress endpoint.
	ImportWait time.Duration `env:"IMPORT_WAIT" envDefault:"1m"`

	// ExportStallTimeout is how long an export waits for a client that
	// stopped reading before it cuts the connection and ends the export's
	// transaction.
	ExportStallTimeout time.Duration `env:"EXPORT_STALL_TIMEOUT" envDefault:"30s"`
	// ExportConcurrency bounds the exports one api process streams at once
	// (each holds a database connection while its client reads), and
	// ExportConcurrencyPerOrg those of one organization among them.
	ExportConcurrency       int `env:"EXPORT_CONCURRENCY" envDefault:"8"`
	ExportConcurrencyPerOrg int `env:"EXPORT_CONCURRENCY_PER_ORG" envDefault:"3"`
	// EventStreamsMax bounds the event streams (GET /api/events) one api
	// process holds; beyond it a new stream is answered 503, so that a load
	// balancer's retry finds another replica.
	EventStreamsMax int `env:"EVENT_STREAMS_MAX" envDefault:"5000"`
	// EventStreamHeartbeat is the interval of an event stream's keep-alive
	// comments (proxies cut connections idle for 30 to 60 s).
	EventStreamHeartbeat time.Duration `env:"EVENT_STREAM_HEARTBEAT" envDefault:"15s"`
	// EventStreamRecheck is how often a stream loads its user's
	// permissions and teams again, and ends when the user, membership or
	// API key is gone.
	EventStreamRecheck time.Duration `env:"EVENT_STREAM_RECHECK" envDefault:"30s"`
}

// Worker configures bin/worker.
type Worker struct {
	Common
	Secrets
	Storage
	Platform
	Campaigns
	AI
	Concurrency int `env:"WORKER_CONCURRENCY" envDefault:"10"`
	// ChatbotOrgConcurrency bounds, per organization, the chatbot's
	// evaluations that call the organization's own servers (model server,
	// `api` AI contexts, api_fetch steps) at once in this process, so that
	// one organization's slow server cannot take every slot; 0 is a quarter
	// of WORKER_CONCURRENCY, at least 1 (ChatbotOrgSlots).
	ChatbotOrgConcurrency int `env:"CHATBOT_ORG_CONCURRENCY" envDefault:"0"`
	// PublicURL is the api's address, in the signed links the worker hands
	// out (documents' prints the provider fetches).
	PublicURL string `env:"PUBLIC_URL" envDefault:"http://localhost:8080"`
	// CampaignConcurrency is the worker's separate pool for campaign lanes,
	// so campaigns never take the slots of interactive work. Paced lanes
	// hand their slot back between runs, so with 200 paced campaigns the
	// pool bounds the lane runs under way at once; a run mostly waits on
	// PostgreSQL and the provider, and 16 slots kept one worker process at
	// 1,630 of the 2,000 msg/s those campaigns were due (32: 1,994).
	CampaignConcurrency int `env:"CAMPAIGN_CONCURRENCY" envDefault:"32"`
	// TaskCheckInterval is how long an idle worker waits before it looks
	// for new tasks again (asynq sleeps half to one and a half of it, and
	// dequeues nothing meanwhile). 20 ms took the chatbot's reply p50 from
	// 177 to 50 ms at 200 msg/s; an idle worker process spends about 3.5 %
	// of a core more than at 200 ms (docs/BENCHMARKS.md).
	TaskCheckInterval time.Duration `env:"WORKER_TASK_CHECK_INTERVAL" envDefault:"20ms"`
}

// ChatbotOrgSlots is CHATBOT_ORG_CONCURRENCY, or its default: a quarter of
// WORKER_CONCURRENCY, at least 1.
func (c Worker) ChatbotOrgSlots() int {
	if c.ChatbotOrgConcurrency > 0 {
		return c.ChatbotOrgConcurrency
	}
	return max(1, c.Concurrency/4)
}

// Scheduler configures bin/scheduler.
type Scheduler struct {
	Common
	Campaigns
	// LeaderTTL is how long a scheduler holds leadership without renewing it;
	// a standby takes over at most this long after the leader dies.
	LeaderTTL time.Duration `env:"SCHEDULER_LEADER_TTL" envDefault:"10s"`
}

// CallBridge configures bin/callbridge, the process that carries calls'
// media (docs/CALLING.md).
type CallBridge struct {
	Common
	Secrets
	Storage
	Platform
	// HTTPAddr serves /healthz, /readyz and /metrics.
	HTTPAddr string `env:"HTTP_ADDR" envDefault:":8082"`
	// PublicIP is the 1:1 NAT address announced in the SDP candidates (the
	// host's public address when it sits behind a cloud NAT).
	PublicIP string `env:"CALLBRIDGE_PUBLIC_IP"`
	// The UDP ports the media uses: open them in the firewall.
	UDPPortMin uint16 `env:"CALLBRIDGE_UDP_PORT_MIN" envDefault:"40000"`
	UDPPortMax uint16 `env:"CALLBRIDGE_UDP_PORT_MAX" envDefault:"49999"`
	// GatherTimeout bounds the candidate gathering before an SDP answer.
	GatherTimeout time.Duration `env:"CALLBRIDGE_GATHER_TIMEOUT" envDefault:"2s"`
	// MaxRequests bounds the call-control requests one instance serves at
	// once; past it a request someone waits for is answered 503 at once.
	MaxRequests int `env:"CALLBRIDGE_MAX_REQUESTS" envDefault:"64"`
	// OutgoingWait is how long an outgoing call rings before it ends.
	OutgoingWait     time.Duration `env:"CALL_OUTGOING_WAIT" envDefault:"30s"`
	RecordingEnabled bool          `env:"CALL_RECORDING_ENABLED" envDefault:"true"`
	// RecordingDir holds the legs' files until they are mixed and stored
	// ("" = the system's temporary directory).
	RecordingDir string `env:"CALL_RECORDING_DIR"`
	FFmpegPath   string `env:"FFMPEG_PATH" envDefault:"ffmpeg"`
}

// LoadCallBridge reads and validates the callbridge configuration.
func LoadCallBridge() (CallBridge, error) { return LoadCallBridgeFrom(nil) }

// LoadCallBridgeFrom is LoadCallBridge with an explicit environment.
func LoadCallBridgeFrom(environ map[string]string) (CallBridge, error) {
	var c CallBridge
	if err := parse(&c, environ); err != nil {
		return c, err
	}
	var errs []error
	errs = append(errs, c.Common.validate()...)
	errs = append(errs, c.Secrets.decode()...)
	errs = append(errs, c.Platform.validate()...)
	errs = append(errs, c.Storage.validate()...)
	if c.UDPPortMin > c.UDPPortMax || (c.UDPPortMin == 0) != (c.UDPPortMax == 0) {
		errs = append(errs, errors.New("CALLBRIDGE_UDP_PORT_MIN and CALLBRIDGE_UDP_PORT_MAX must be a range (min <= max), or both 0 for any port"))
	}
	if c.PublicIP != "" && net.ParseIP(c.PublicIP) == nil {
		errs = append(errs, errors.New("CALLBRIDGE_PUBLIC_IP must be an IP address"))
	}
	if c.GatherTimeout <= 0 || c.GatherTimeout > 30*time.Second {
		errs = append(errs, errors.New("CALLBRIDGE_GATHER_TIMEOUT must be between 0 and 30s"))
	}
	if c.MaxRequests < 1 || c.MaxRequests > 10000 {
		errs = append(errs, errors.New("CALLBRIDGE_MAX_REQUESTS must be between 1 and 10000"))
	}
	if c.OutgoingWait <= 0 || c.OutgoingWait > 2*time.Minute {
		errs = append(errs, errors.New("CALL_OUTGOING_WAIT must be between 0 and 2m"))
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		errs = append(errs, errors.New("HTTP_ADDR must be host:port (or :port)"))
	}
	return c, errors.Join(errs...)
}

// LoadAPI reads and validates the api configuration.
func LoadAPI() (API, error) { return LoadAPIFrom(nil) }

// LoadAPIFrom is LoadAPI with an explicit environment (nil means the process
// environment); tests use it.
func LoadAPIFrom(environ map[string]string) (API, error) {
	var c API
	if err := parse(&c, environ); err != nil {
		return c, err
	}
	var errs []error
	errs = append(errs, c.Common.validate()...)
	errs = append(errs, c.Secrets.decode()...)
	if len(c.JWTSecret) < 32 {
		errs = append(errs, errors.New("JWT_SECRET must be at least 32 characters"))
	}
	if c.AccessTokenTTL <= 0 {
		errs = append(errs, errors.New("ACCESS_TOKEN_TTL must be positive"))
	}
	if c.RefreshTokenTTL <= c.AccessTokenTTL {
		errs = append(errs, errors.New("REFRESH_TOKEN_TTL must be longer than ACCESS_TOKEN_TTL"))
	}
	if c.HTTPReadTimeout <= 0 || c.HTTPIdleTimeout <= 0 {
		errs = append(errs, errors.New("HTTP_READ_TIMEOUT and HTTP_IDLE_TIMEOUT must be positive"))
	}
	if c.HTTPWriteTimeout < c.HTTPReadTimeout {
		errs = append(errs, errors.New("HTTP_WRITE_TIMEOUT must be at least HTTP_READ_TIMEOUT: it also covers reading the body"))
	}
	if c.RateLimitPerMinute <= 0 {
		errs = append(errs, errors.New("RATE_LIMIT_PER_MINUTE must be positive"))
	}
	if c.ImportWait < 0 || c.ImportWait > 10*time.Minute {
		errs = append(errs, errors.New("IMPORT_WAIT must be between 0 and 10m"))
	}
	if c.ExportStallTimeout <= 0 || c.ExportStallTimeout > 10*time.Minute {
		errs = append(errs, errors.New("EXPORT_STALL_TIMEOUT must be positive and at most 10m"))
	}
	// At most half of the api's 25 pooled database connections
	// (internal/database), so that exports never starve other requests.
	if c.ExportConcurrency < 1 || c.ExportConcurrency > 12 {
		errs = append(errs, errors.New("EXPORT_CONCURRENCY must be between 1 and 12 (about half the database pool: each export holds a connection)"))
	}
	if c.EventStreamsMax < 1 {
		errs = append(errs, errors.New("EVENT_STREAMS_MAX must be at least 1"))
	}
	if c.EventStreamHeartbeat <= 0 || c.EventStreamHeartbeat > time.Minute {
		errs = append(errs, errors.New("EVENT_STREAM_HEARTBEAT must be between 0 and 1m (proxies cut idle connections)"))
	}
	if c.EventStreamRecheck <= 0 || c.EventStreamRecheck > 5*time.Minute {
		errs = append(errs, errors.New("EVENT_STREAM_RECHECK must be between 0 and 5m"))
	}
	if c.ExportConcurrencyPerOrg < 1 || c.ExportConcurrencyPerOrg > c.ExportConcurrency {
		errs = append(errs, errors.New("EXPORT_CONCURRENCY_PER_ORG must be between 1 and EXPORT_CONCURRENCY"))
	}
	if c.RateLimitBulkPerMinute <= 0 {
		errs = append(errs, errors.New("RATE_LIMIT_BULK_PER_MINUTE must be positive"))
	}
	errs = append(errs, c.Platform.validate()...)
	errs = append(errs, c.Campaigns.validate()...)
	errs = append(errs, c.AI.validate()...)
	errs = append(errs, c.Calling.validate()...)
	if err := httpURL(c.PublicURL); err != nil {
		errs = append(errs, fmt.Errorf("PUBLIC_URL %w", err))
	}
	errs = append(errs, c.Storage.validate()...)
	if !strings.Contains(c.BootstrapAdminEmail, "@") {
		errs = append(errs, errors.New("BOOTSTRAP_ADMIN_EMAIL must be an email address"))
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, errors.New("METRICS_ADDR must be host:port (or :port), like 127.0.0.1:9090"))
		} else if c.MetricsAddr == c.HTTPAddr {
			errs = append(errs, errors.New("METRICS_ADDR must differ from HTTP_ADDR: /metrics is not served on the public listener"))
		}
	}
	if err := httpURL(c.EmbeddedSignupScriptURL); err != nil {
		errs = append(errs, fmt.Errorf("EMBEDDED_SIGNUP_SCRIPT_URL %w", err))
	}
	for _, o := range c.EmbeddedSignupOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			errs = append(errs, fmt.Errorf("EMBEDDED_SIGNUP_ORIGINS: %q must be an origin like https://www.example.com", o))
		}
	}
	if (c.MonitoringUser == "") != (c.MonitoringPassword == "") {
		errs = append(errs, errors.New("MONITORING_USER and MONITORING_PASSWORD must be set together"))
	}
	return c, errors.Join(errs...)
}

// LoadWorker reads and validates the worker configuration.
func LoadWorker() (Worker, error) { return LoadWorkerFrom(nil) }

// LoadWorkerFrom is LoadWorker with an explicit environment.
func LoadWorkerFrom(environ map[string]string) (Worker, error) {
	var c Worker
	if err := parse(&c, environ); err != nil {
		return c, err
	}
	var errs []error
	errs = append(errs, c.Common.validate()...)
	errs = append(errs, c.Secrets.decode()...)
	if c.Concurrency <= 0 {
		errs = append(errs, errors.New("WORKER_CONCURRENCY must be positive"))
	}
	if c.ChatbotOrgConcurrency < 0 || c.ChatbotOrgConcurrency > c.Concurrency {
		errs = append(errs, errors.New("CHATBOT_ORG_CONCURRENCY must be between 0 (a quarter of WORKER_CONCURRENCY) and WORKER_CONCURRENCY"))
	}
	if err := httpURL(c.PublicURL); err != nil {
		errs = append(errs, fmt.Errorf("PUBLIC_URL %w", err))
	}
	if c.CampaignConcurrency <= 0 {
		errs = append(errs, errors.New("CAMPAIGN_CONCURRENCY must be positive"))
	}
	errs = append(errs, c.Storage.validate()...)
	errs = append(errs, c.Platform.validate()...)
	errs = append(errs, c.Campaigns.validate()...)
	errs = append(errs, c.AI.validate()...)
	return c, errors.Join(errs...)
}

// LoadScheduler reads and validates the scheduler configuration.
func LoadScheduler() (Scheduler, error) { return LoadSchedulerFrom(nil) }

// LoadSchedulerFrom is LoadScheduler with an explicit environment.
func LoadSchedulerFrom(environ map[string]string) (Scheduler, error) {
	var c Scheduler
	if err := parse(&c, environ); err != nil {
		return c, err
	}
	errs := append(c.Common.validate(), c.Campaigns.validate()...)
	if c.LeaderTTL < time.Second {
		errs = append(errs, errors.New("SCHEDULER_LEADER_TTL must be at least 1s"))
	}
	return c, errors.Join(errs...)
}

func parse(v any, environ map[string]string) error {
	opts := env.Options{}
	if environ != nil {
		opts.Environment = environ
	}
	err := env.ParseWithOptions(v, opts)
	if err == nil {
		return nil
	}
	// Parse errors name the Go field; operators need the variable.
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("configuration: %w", err)
	}
	vars := envNames(reflect.TypeOf(v).Elem())
	msgs := make([]error, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) && vars[pe.Name] != "" {
			e = fmt.Errorf("%s: invalid value: %v", vars[pe.Name], pe.Err)
		}
		msgs = append(msgs, e)
	}
	return fmt.Errorf("configuration: %w", errors.Join(msgs...))
}

// envNames maps struct field names to their environment variable names,
// through embedded structs.
func envNames(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range envNames(f.Type) {
				out[k] = v
			}
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("env"), ","); name != "" && name != "-" {
			out[f.Name] = name
		}
	}
	return out
}

func (c Common) validate() []error {
	var errs []error
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		errs = append(errs, errors.New("DATABASE_URL must be a postgres:// URL"))
	}
	if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		errs = append(errs, errors.New("REDIS_URL must be a redis:// or rediss:// URL"))
	}
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, errors.New("LOG_LEVEL must be one of debug, info, warn, error"))
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		errs = append(errs, errors.New("LOG_FORMAT must be text or json"))
	}
	if c.ShutdownTimeout <= 0 {
		errs = append(errs, errors.New("SHUTDOWN_TIMEOUT must be positive"))
	}
	return errs
}

// decode accepts the key as 64 hex characters or as base64 of 32 bytes, the
// two forms `openssl rand` produces.
func (s *Secrets) decode() []error {
	raw := strings.TrimSpace(s.EncryptionKeyRaw)
	if raw == "" {
		return nil // already reported as required
	}
	if b, err := hex.DecodeString(raw); err == nil && len(b) == 32 {
		s.EncryptionKey = b
		return nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(raw); err == nil && len(b) == 32 {
			s.EncryptionKey = b
			return nil
		}
	}
	return []error{errors.New("ENCRYPTION_KEY must be 32 bytes, given as 64 hex characters or base64")}
}

func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http(s) URL with a host")
	}
	return nil
}
