// Package platformsim simulates the messaging provider's business API (the
// endpoints, JSON shapes and error shape described in shared/PROVIDER.md) and
// the webhooks it posts back, so that tests, benchmarks and the local demo
// never reach the real provider.
//
// A Simulator is an http.Handler. Paths under /{version}/... are the provider
// API (bearer-token auth, provider error shape, every request recorded);
// paths under /_sim/... are the control API used by tests and operators
// (seeding accounts, injecting incoming messages, inspecting what was sent).
// Everything the control API does is also available as Go methods for
// in-process tests.
//
// All state is in memory. One mutex guards the object graph (accounts, phone
// numbers, templates, messages...); the request log and the webhook log have
// their own mutexes so that inspecting them does not stall sends. Status
// webhooks are driven by one scheduler goroutine and posted by a fixed pool
// of senders, so a 100,000-message benchmark costs neither a goroutine nor a
// timer per message.
package platformsim

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/platformsim/rtcpeer"
)

// Defaults applied by New and UpdateConfig to zero values.
const (
	DefaultAppID                 = "100000000000001"
	DefaultAppSecret             = "sim-app-secret"
	DefaultThroughputPerSecond   = 80
	DefaultTemplateApprovalDelay = 2 * time.Second
)

const (
	webhookSenders     = 32
	maxWebhookAttempts = 4
	maxRequestBody     = 64 << 20
	// firstObjectID starts the shared id counter above the 15-digit ids
	// operators like to seed (200000000000001...) and far below 2^53, so that
	// template ids survive being JSON numbers in webhooks.
	firstObjectID = 1_000_000_000_000_000
)

// Config is the simulator's behaviour. The durations count from the moment a
// send is accepted.
type Config struct {
	AppID      string
	AppSecret  string // keys the X-Hub-Signature-256 of every webhook
	WebhookURL string // empty: webhooks are dropped until one is configured

	// SentAfter, DeliveredAfter and ReadAfter schedule the status webhooks of
	// an accepted message; zero means at once, a negative value disables
	// that status.
	SentAfter      time.Duration
	DeliveredAfter time.Duration
	ReadAfter      time.Duration
	// TemplateApprovalDelay is how long a new template stays PENDING; zero
	// means DefaultTemplateApprovalDelay, negative means it is never decided
	// automatically (use SetTemplateStatus).
	TemplateApprovalDelay time.Duration
	// Latency is added before answering every provider API request.
	Latency time.Duration
	// ThroughputPerSecond caps message sends per phone number in any rolling
	// second; zero means DefaultThroughputPerSecond, negative means no cap.
	ThroughputPerSecond int
	// ErrorRate is the fraction (0..1) of send requests answered with a
	// transient 131000 error and not recorded.
	ErrorRate float64
	// FailRecipients maps a recipient to the error code of the single
	// failed status its messages get instead of sent/delivered/read.
	FailRecipients map[string]int
	// StatusBatchSize lets up to that many queued statuses of one phone
	// number share a webhook; values below 1 mean 1.
	StatusBatchSize int
	Logger          *slog.Logger
}

// normalize applies defaults to zero values. It runs on every config change
// so that callers reading the config never see an unusable value.
func (c *Config) normalize() {
	if c.AppID == "" {
		c.AppID = DefaultAppID
	}
	if c.AppSecret == "" {
		c.AppSecret = DefaultAppSecret
	}
	if c.TemplateApprovalDelay == 0 {
		c.TemplateApprovalDelay = DefaultTemplateApprovalDelay
	}
	if c.ThroughputPerSecond == 0 {
		c.ThroughputPerSecond = DefaultThroughputPerSecond
	}
	c.ErrorRate = min(max(c.ErrorRate, 0), 1)
	if c.StatusBatchSize < 1 {
		c.StatusBatchSize = 1
	}
	if c.Latency < 0 {
		c.Latency = 0
	}
}

// clone copies c so that the caller may change the map without touching the
// copy readers hold.
func (c Config) clone() Config {
	c.FailRecipients = maps.Clone(c.FailRecipients)
	return c
}

// Simulator is the provider simulator. Create it with New, serve it with any
// http.Server (or httptest.NewServer) and stop it with Close.
type Simulator struct {
	log      *slog.Logger
	provider *http.ServeMux
	control  *http.ServeMux
	client   *http.Client

	cfgMu   sync.RWMutex
	cfg     Config
	baseURL string

	// mu guards the object graph below.
	mu        sync.Mutex
	nextID    int64
	objects   map[string]object // every numeric id: WABA, phone, media, template, flow, catalog, product
	tokens    map[string]*grant
	codes     map[string]OAuthCode
	templates map[string]*template // by templateKey
	messages  map[string]*message
	sent      []*message        // accepted messages in send order
	incoming  map[string]string // incoming message id → phone number id (for mark-as-read)
	calls     map[string]*call
	callPerms map[string]callPermission // by permKey
	// signupCodes are the codes the embedded-signup stand-in hands out,
	// one per load of its script (signup.go).
	signupCodes []string

	// Calls with media (callmedia.go). Actions and peers outlive the call
	// so that tests can inspect a call after it ended.
	callActions    map[string][]string
	callPeers      map[string]*rtcpeer.Peer
	callBehaviours map[string]CallBehaviour // by user wa_id

	// gen changes on Reset so that statuses scheduled before it are dropped.
	gen atomic.Uint64

	reqMu     sync.Mutex
	requests  []*requestRecord
	nextReqID int64

	// faultMu guards the injected faults (faults.go).
	faultMu sync.Mutex
	faults  []*activeFault

	whMu     sync.Mutex
	webhooks []*webhookRecord
	nextWhID int64

	sched *scheduler
	queue *webhookQueue

	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New returns a running simulator: its scheduler and webhook senders are
// started and must be stopped with Close.
func New(cfg Config) *Simulator {
	cfg = cfg.clone()
	cfg.normalize()
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = webhookSenders * 2
	ctx, cancel := context.WithCancel(context.Background())
	s := &Simulator{
		log:       logger,
		client:    &http.Client{Transport: transport, Timeout: 10 * time.Second},
		cfg:       cfg,
		nextID:    firstObjectID,
		objects:   make(map[string]object),
		tokens:    make(map[string]*grant),
		codes:     make(map[string]OAuthCode),
		templates: make(map[string]*template),
		messages:  make(map[string]*message),
		incoming:  make(map[string]string),
		calls:     make(map[string]*call),
		callPerms: make(map[string]callPermission),
		sched:     newScheduler(),
		queue:     newWebhookQueue(),
		ctx:       ctx,
		cancel:    cancel,

		callActions:    make(map[string][]string),
		callPeers:      make(map[string]*rtcpeer.Peer),
		callBehaviours: make(map[string]CallBehaviour),
	}
	s.provider = s.providerRoutes()
	s.control = s.controlRoutes()

	s.wg.Add(1 + webhookSenders)
	go func() {
		defer s.wg.Done()
		s.runScheduler()
	}()
	for range webhookSenders {
		go func() {
			defer s.wg.Done()
			s.runSender()
		}()
	}
	return s
}

// Close stops the scheduler and the webhook senders, abandoning pending
// statuses and queued webhooks, and closes every call's media peer. The
// handler keeps answering afterwards but posts nothing. Close is idempotent.
func (s *Simulator) Close() {
	s.closeOnce.Do(func() {
		s.cancel()
		s.queue.close()
		s.wg.Wait()
		s.closeCallPeers()
		s.client.CloseIdleConnections()
	})
}

// ServeHTTP routes /_sim/... to the control API and everything else to the
// provider API.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_sim/") {
		s.control.ServeHTTP(w, r)
		return
	}
	s.serveProvider(w, r)
}

// SetBaseURL tells the simulator the address clients reach it at, used in
// media download URLs and paging links. Without it the request's Host is
// used.
func (s *Simulator) SetBaseURL(u string) {
	s.cfgMu.Lock()
	s.baseURL = strings.TrimRight(u, "/")
	s.cfgMu.Unlock()
}

// SetWebhookURL changes where webhooks are posted.
func (s *Simulator) SetWebhookURL(u string) {
	s.UpdateConfig(func(c *Config) { c.WebhookURL = u })
}

// UpdateConfig changes the configuration at run time. fn gets a copy it may
// modify freely; defaults are re-applied afterwards. Changes apply to
// requests and sends that start afterwards. The logger cannot be changed.
func (s *Simulator) UpdateConfig(fn func(*Config)) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	c := s.cfg.clone()
	fn(&c)
	c.Logger = s.cfg.Logger
	c.normalize()
	s.cfg = c
}

// Config returns a copy of the current configuration.
func (s *Simulator) Config() Config {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg.clone()
}

// config is the hot-path read: the map inside is never mutated after it is
// published, so no clone is needed.
func (s *Simulator) config() Config {
	s.cfgMu.RLock()
	defer s.cfgMu.RUnlock()
	return s.cfg
}

// base returns the configured base URL or one built from the request.
func (s *Simulator) base(r *http.Request) string {
	s.cfgMu.RLock()
	b := s.baseURL
	s.cfgMu.RUnlock()
	if b != "" || r == nil {
		return b
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// newIDLocked returns the next numeric object id. Caller holds s.mu.
func (s *Simulator) newIDLocked() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

// reserveIDLocked keeps the counter above a seeded numeric id so that later
// generated ids never collide with it.
func (s *Simulator) reserveIDLocked(id string) {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > s.nextID {
		s.nextID = n
	}
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func newMessageID() string { return "wamid." + randomToken(30) }
func newCallID() string    { return "wacid." + randomToken(24) }
func newTraceID() string   { return "A" + randomToken(16) }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func digitsOnly(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// DefaultBaseURL returns the URL a client on the same host reaches a
// simulator listening on addr at (":8090" → "http://127.0.0.1:8090").
func DefaultBaseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
