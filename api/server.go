// Package api is the HTTP shell: the gin engine, its middleware (request
// log, panic recovery, authentication, rate limiting, RBAC), the job
// monitor's gate, the health probes and the request metrics. The routes themselves belong to
// the domain handler packages under api/ (identityapi, contactsapi...),
// built on api/web; each package's Module gives them with their tag, and app
// lists the modules once (Deps.Modules).
package api

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"wharf/api/console"
	"wharf/api/openapi"
	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/authguard"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/ratelimit"
	"wharf/module"
)

// Config is what the HTTP layer needs from the api configuration.
type Config struct {
	RateLimitPerMinute     int
	RateLimitBulkPerMinute int
	TrustedProxies         []string
	MonitoringUser         string
	MonitoringPassword     string
	// PublicURL is the service's external base URL; requests whose Origin
	// is PublicURL's count as same-origin (the job monitor's CSRF check).
	PublicURL string
	// SignupScriptURL and SignupOrigins are the provider's embedded-signup
	// script and the origins it needs, allowed by the Content-Security-
	// Policy of the console's embedded signup page only.
	SignupScriptURL string
	SignupOrigins   []string
}

// Readiness is what /readyz checks. Database and Redis are required: the
// replica is not ready when either fails. AudioEnabled is only reported.
// They are functions, not the connections, so that the HTTP layer depends
// on neither gorm nor go-redis.
type Readiness struct {
	Database     func(context.Context) error
	Redis        func(context.Context) error
	AudioEnabled func() bool
}

// Deps are what the shell needs; the domain services are in the handlers
// of the modules' routes.
type Deps struct {
	Config     Config
	Log        *slog.Logger
	Limiter    *ratelimit.Limiter
	Identity   *identity.Service // authenticates every request and the job monitor's sign-ins
	Ready      Readiness
	Monitoring http.Handler // the asynq web UI, mounted at /monitoring
	// Metrics counts and times every request; the api serves them on its
	// own listener (METRICS_ADDR), never on this handler.
	Metrics *metrics.Set
	// Modules are every domain's module, in the order of the route table
	// (docs/API.md, the OpenAPI document's tags): app lists them.
	Modules []module.Module
}

// Server is the HTTP shell around the domains' routes.
type Server struct {
	// Identity authenticates requests (exported for the tests that count
	// its password checks).
	Identity *identity.Service

	cfg     Config
	log     *slog.Logger
	limiter *ratelimit.Limiter
	ready   Readiness
	monitor *monitor
	// tokenGuard counts failed Frappe token authentications.
	tokenGuard *authguard.Guard
	metrics    *metrics.Set
	routes     []web.Route // the modules' routes, tagged
	docs       *openapi.Handlers
	console    *console.Handler
}

// documents are the OpenAPI documents generated in this process, by route
// table. A document is a function of the compiled route table alone (a
// route's description reads no field of its domain's handlers, so the
// modules built without services list the same rows), like a package-level
// regexp.MustCompile; one generation per table is enough, and the tests
// boot hundreds of servers (a generation takes about 0.1 s, 0.6 s under
// the race detector).
var documents = struct {
	sync.Mutex
	byTable map[string]*openapi.Handlers
}{byTable: map[string]*openapi.Handlers{}}

// openAPI generates the document of routes, or gives the one generated
// before for the same table (its tags, methods and paths in order).
func openAPI(routes []web.Route) (*openapi.Handlers, error) {
	var key strings.Builder
	for _, r := range routes {
		key.WriteString(r.Tag + "\x00" + r.Method + " " + r.Path + "\n")
	}
	documents.Lock()
	defer documents.Unlock()
	if h, ok := documents.byTable[key.String()]; ok {
		return h, nil
	}
	h, err := openapi.New(routes)
	if err == nil {
		documents.byTable[key.String()] = h
	}
	return h, err
}

// New builds the server; the first one of a route table generates its
// OpenAPI document. A failure to generate it is a programming error (the
// api/openapi tests catch it first): New panics then, as
// regexp.MustCompile does.
func New(d Deps) *Server {
	routes := module.Routes(d.Modules)
	docs, err := openAPI(routes)
	if err != nil {
		panic(err)
	}
	return &Server{Identity: d.Identity, cfg: d.Config, log: d.Log, limiter: d.Limiter, ready: d.Ready, routes: routes,
		metrics: d.Metrics, monitor: newMonitor(d.Monitoring, d.Identity, d.Limiter, d.Config), docs: docs,
		tokenGuard: authguard.New(d.Limiter, "wharf:authfail:apitoken", authguard.APIToken()), console: console.New().WithSignup(d.Config.SignupScriptURL, d.Config.SignupOrigins)}
}

// Routes lists every route of every domain and the document's own, for
// tests and documentation.
func (s *Server) Routes() []web.Route { return slices.Concat(s.routes, s.docs.Routes()) }

// OpenAPI is the OpenAPI 3.1 document of the routes, as JSON (what
// GET /api/openapi.json serves).
func (s *Server) OpenAPI() []byte { return s.docs.Document() }

var errNoRoute = apperr.NotFoundf("route not found")

// Handler builds the gin engine.
func (s *Server) Handler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	if err := r.SetTrustedProxies(s.cfg.TrustedProxies); err != nil {
		s.log.Warn("invalid TRUSTED_PROXIES; trusting none", "error", err)
		_ = r.SetTrustedProxies(nil)
	}
	r.Use(s.measure, s.requestLog, s.recoverPanic)
	r.NoRoute(s.identify, s.rateLimit(false, web.Fail), func(c *gin.Context) { web.Fail(c, errNoRoute) })
	r.NoMethod(func(c *gin.Context) { web.Error(c, http.StatusMethodNotAllowed, "method not allowed") })

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	// The web console (api/console): / leads to it, /console/* serves it.
	toConsole := func(c *gin.Context) { c.Redirect(http.StatusFound, console.Base) }
	r.GET("/", toConsole)
	r.GET("/console", toConsole)
	con := gin.WrapH(s.console)
	r.GET("/console/*path", con)
	r.HEAD("/console/*path", con)
	if s.monitor.ui != nil {
		mon := []gin.HandlerFunc{s.monitor.gate, gin.WrapH(s.monitor.ui)}
		r.Any("/monitoring", mon...)
		r.Any("/monitoring/*path", mon...)
	}
	for _, rt := range s.Routes() {
		if rt.Unlimited {
			r.Handle(rt.Method, rt.Path, s.authorize(rt), rt.Handler)
			continue
		}
		r.Handle(rt.Method, rt.Path, s.identify, s.rateLimit(rt.Bulk, rt.Failer()), s.authorize(rt), rt.Handler)
	}
	return r
}
