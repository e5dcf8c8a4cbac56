// Package api is the HTTP layer: the gin router, its middleware (request log,
// panic recovery, authentication, rate limiting, RBAC) and one file per
// resource group. Handlers bind the request, call a domain package and map
// the result to the spec's JSON; business rules live under internal/.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/apperr"
	"wharf/internal/authguard"
	"wharf/internal/campaigns"
	"wharf/internal/contacts"
	"wharf/internal/database"
	"wharf/internal/identity"
	"wharf/internal/inbound"
	"wharf/internal/messaging"
	"wharf/internal/orgsettings"
	"wharf/internal/ratelimit"
	"wharf/internal/templates"
	"wharf/internal/webhooks"
	"wharf/jobs"
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
}

// Deps are the domain services and connections the handlers use.
type Deps struct {
	Config     Config
	Log        *slog.Logger
	DB         *gorm.DB
	Redis      *redis.Client
	Identity   *identity.Service
	Settings   *orgsettings.Service
	Accounts   *accounts.Service
	Contacts   *contacts.Service
	Messaging  *messaging.Service
	Webhooks   *webhooks.Service
	Inbound    *inbound.Service
	Templates  *templates.Service
	Campaigns  *campaigns.Service
	Enqueuer   *jobs.Enqueuer
	Limiter    *ratelimit.Limiter
	Monitoring http.Handler // the asynq web UI, mounted at /monitoring
}

// Server holds the handlers' dependencies.
type Server struct {
	Deps
	cfg      Config
	identity *identity.Service
	settings *orgsettings.Service
	limiter  *ratelimit.Limiter
	log      *slog.Logger
	monAuth  *monitoringAuth
	// monGuard and loginGuard count failed sign-ins to the job monitor and
	// to POST /api/auth/login.
	monGuard, loginGuard *authguard.Guard
	publicOrigin         string
	proxies              []netip.Prefix
}

// New builds the server.
func New(d Deps) *Server {
	return &Server{Deps: d, cfg: d.Config, identity: d.Identity, settings: d.Settings, limiter: d.Limiter, log: d.Log,
		monAuth:      newMonitoringAuth(d.Identity, d.Config.MonitoringUser, d.Config.MonitoringPassword),
		monGuard:     authguard.New(d.Limiter, "wharf:authfail:monitoring", authguard.Monitoring()),
		loginGuard:   authguard.New(d.Limiter, "wharf:authfail:login", authguard.Login()),
		publicOrigin: publicOrigin(d.Config.PublicURL),
		proxies:      parseProxies(d.Config.TrustedProxies),
	}
}

// route is one row of the router table.
type route struct {
	Method, Path string
	Access       Access
	// Bulk routes draw on the bulk allowance (RATE_LIMIT_BULK_PER_MINUTE)
	// instead of the standard one.
	Bulk bool
	// SessionOnly routes refuse API keys: a leaked key must not be able to
	// mint more keys, switch organization, change a password or an email,
	// or manage users, members, roles and organizations. The identity
	// domain refuses API-key principals on the same operations as well.
	SessionOnly bool
	// Unlimited routes skip the rate limiter: the provider's inbound webhook
	// must never be refused for volume.
	Unlimited bool
	Handler   gin.HandlerFunc
}

// RouteInfo describes a route for tests and documentation.
type RouteInfo struct {
	Method, Path string
	Access       Access
	Bulk         bool
	SessionOnly  bool
	Unlimited    bool
}

// routes is the router table: every /api route with the access it requires.
func (s *Server) routes() []route {
	return []route{
		// Authentication and session
		{Method: "POST", Path: "/api/auth/register", Access: Public(), Handler: s.register},
		{Method: "POST", Path: "/api/auth/login", Access: Public(), Handler: s.login},
		{Method: "POST", Path: "/api/auth/refresh", Access: Public(), Handler: s.refresh},
		{Method: "POST", Path: "/api/auth/logout", Access: Public(), Handler: s.logout},
		{Method: "POST", Path: "/api/auth/switch-org", Access: Authenticated(), SessionOnly: true, Handler: s.switchOrg},
		{Method: "GET", Path: "/api/me", Access: Authenticated(), Handler: s.me},
		{Method: "PUT", Path: "/api/me/password", Access: Authenticated(), SessionOnly: true, Handler: s.changePassword},
		{Method: "GET", Path: "/api/me/organizations", Access: Authenticated(), Handler: s.myOrganizations},

		// API keys
		{Method: "GET", Path: "/api/api-keys", Access: Perm("api_keys:read"), Handler: s.listAPIKeys},
		{Method: "POST", Path: "/api/api-keys", Access: Perm("api_keys:create"), SessionOnly: true, Handler: s.createAPIKey},
		{Method: "DELETE", Path: "/api/api-keys/:id", Access: Perm("api_keys:delete"), Handler: s.deleteAPIKey},

		// Users, roles and permissions
		{Method: "GET", Path: "/api/users", Access: Perm("users:read"), Handler: s.listUsers},
		{Method: "GET", Path: "/api/users/:id", Access: Perm("users:read"), Handler: s.getUser},
		{Method: "POST", Path: "/api/users", Access: Perm("users:create"), SessionOnly: true, Handler: s.createUser},
		{Method: "PUT", Path: "/api/users/:id", Access: Perm("users:update"), SessionOnly: true, Handler: s.updateUser},
		{Method: "DELETE", Path: "/api/users/:id", Access: Perm("users:delete"), SessionOnly: true, Handler: s.deleteUser},
		{Method: "PUT", Path: "/api/users/:id/availability", Access: SelfOr("id", "users:update"), Handler: s.setAvailability},
		{Method: "GET", Path: "/api/permissions", Access: Perm("roles:read"), Handler: s.listPermissions},
		{Method: "GET", Path: "/api/roles", Access: Perm("roles:read"), Handler: s.listRoles},
		{Method: "GET", Path: "/api/roles/:id", Access: Perm("roles:read"), Handler: s.getRole},
		{Method: "POST", Path: "/api/roles", Access: Perm("roles:create"), SessionOnly: true, Handler: s.createRole},
		{Method: "PUT", Path: "/api/roles/:id", Access: Perm("roles:update"), SessionOnly: true, Handler: s.updateRole},
		{Method: "DELETE", Path: "/api/roles/:id", Access: Perm("roles:delete"), SessionOnly: true, Handler: s.deleteRole},

		// Organizations and members
		{Method: "GET", Path: "/api/organizations", Access: SuperAdminOr("organizations:read"), Handler: s.listOrganizations},
		{Method: "GET", Path: "/api/organizations/current", Access: Authenticated(), Handler: s.currentOrganization},
		{Method: "POST", Path: "/api/organizations", Access: SuperAdminOr("organizations:write"), SessionOnly: true, Handler: s.createOrganization},
		{Method: "GET", Path: "/api/organizations/members", Access: Perm("users:read"), Handler: s.listMembers},
		{Method: "POST", Path: "/api/organizations/members", Access: Perm("users:create"), SessionOnly: true, Handler: s.addMember},
		{Method: "PUT", Path: "/api/organizations/members/:member_id", Access: Perm("users:update"), SessionOnly: true, Handler: s.updateMember},
		{Method: "DELETE", Path: "/api/organizations/members/:member_id", Access: Perm("users:delete"), SessionOnly: true, Handler: s.removeMember},

		// Organization settings (two families over the same values)
		{Method: "GET", Path: "/api/organizations/settings", Access: Perm("settings:read"), Handler: s.getOrgSettingsShort},
		{Method: "PUT", Path: "/api/organizations/settings", Access: Perm("settings:update"), Handler: s.putOrgSettingsShort},
		{Method: "GET", Path: "/api/org/settings", Access: Perm("settings:read"), Handler: s.getOrgSettings},
		{Method: "PUT", Path: "/api/org/settings", Access: Perm("settings:update"), Handler: s.putOrgSettings},
		{Method: "POST", Path: "/api/org/audio", Access: Perm("organizations:write"), Bulk: true, Handler: s.uploadAudio},

		// Platform accounts and onboarding
		{Method: "GET", Path: "/api/accounts", Access: Perm("accounts:read"), Handler: s.listAccounts},
		{Method: "GET", Path: "/api/accounts/:id", Access: Perm("accounts:read"), Handler: s.getAccount},
		{Method: "POST", Path: "/api/accounts", Access: Perm("accounts:create"), Handler: s.createAccount},
		{Method: "PUT", Path: "/api/accounts/:id", Access: Perm("accounts:update"), Handler: s.updateAccount},
		{Method: "DELETE", Path: "/api/accounts/:id", Access: Perm("accounts:delete"), Handler: s.deleteAccount},
		{Method: "POST", Path: "/api/accounts/:id/test", Access: Perm("accounts:read"), Handler: s.testAccount},
		{Method: "GET", Path: "/api/embedded-signup/config", Access: Perm("accounts:write"), Handler: s.embeddedSignupConfig},
		{Method: "POST", Path: "/api/accounts/exchange-token", Access: Perm("accounts:write"), SessionOnly: true, Handler: s.exchangeToken},
		{Method: "POST", Path: "/api/accounts/:id/register", Access: Perm("accounts:write"), Handler: s.registerAccount},

		// The provider's inbound webhook: verified by signature, never rate limited
		{Method: "GET", Path: "/api/webhook", Access: Public(), Unlimited: true, Handler: s.verifyInbound},
		{Method: "POST", Path: "/api/webhook", Access: Public(), Unlimited: true, Handler: s.receiveInbound},

		// Contacts and tags
		{Method: "GET", Path: "/api/contacts", Access: Perm("contacts:read"), Handler: s.listContacts},
		{Method: "GET", Path: "/api/contacts/:id", Access: Perm("contacts:read"), Handler: s.getContact},
		{Method: "POST", Path: "/api/contacts", Access: Perm("contacts:create"), Handler: s.createContact},
		{Method: "PUT", Path: "/api/contacts/:id", Access: Perm("contacts:update"), Handler: s.updateContact},
		{Method: "DELETE", Path: "/api/contacts/:id", Access: Perm("contacts:delete"), Handler: s.deleteContact},
		{Method: "PUT", Path: "/api/contacts/:id/assign", Access: Perm("contacts:update"), Handler: s.assignContact},
		{Method: "GET", Path: "/api/contacts/:id/session-data", Access: Perm("contacts:read"), Handler: s.contactSessionData},
		{Method: "PUT", Path: "/api/contacts/:id/tags", Access: Perm("contacts:update"), Handler: s.setContactTags},
		{Method: "GET", Path: "/api/tags", Access: Perm("contacts:read"), Handler: s.listTags},
		{Method: "POST", Path: "/api/tags", Access: Perm("contacts:update"), Handler: s.createTag},
		{Method: "PUT", Path: "/api/tags/:name", Access: Perm("contacts:update"), Handler: s.updateTag},
		{Method: "DELETE", Path: "/api/tags/:name", Access: Perm("contacts:update"), Handler: s.deleteTag},

		// Messages
		{Method: "GET", Path: "/api/contacts/:id/messages", Access: Perm("messages:read"), Handler: s.listMessages},
		{Method: "POST", Path: "/api/contacts/:id/messages", Access: Perm("messages:create"), Handler: s.sendMessage},
		{Method: "POST", Path: "/api/messages/template", Access: Perm("messages:create"), Handler: s.sendTemplate},
		{Method: "POST", Path: "/api/messages/media", Access: Perm("messages:create"), Handler: s.sendMedia},
		{Method: "PUT", Path: "/api/messages/:id/read", Access: Perm("messages:read"), Handler: s.markRead},

		// Templates
		{Method: "GET", Path: "/api/templates", Access: Perm("templates:read"), Handler: s.listTemplates},
		{Method: "GET", Path: "/api/templates/:id", Access: Perm("templates:read"), Handler: s.getTemplate},
		{Method: "POST", Path: "/api/templates", Access: Perm("templates:create"), Handler: s.createTemplate},
		{Method: "PUT", Path: "/api/templates/:id", Access: Perm("templates:update"), Handler: s.updateTemplate},
		{Method: "DELETE", Path: "/api/templates/:id", Access: Perm("templates:delete"), Handler: s.deleteTemplate},
		{Method: "POST", Path: "/api/templates/sync", Access: Perm("templates:update"), Bulk: true, Handler: s.syncTemplates},
		{Method: "POST", Path: "/api/templates/:id/publish", Access: Perm("templates:update"), Handler: s.publishTemplate},

		// Campaigns
		{Method: "GET", Path: "/api/campaigns", Access: Perm("campaigns:read"), Handler: s.listCampaigns},
		{Method: "GET", Path: "/api/campaigns/:id", Access: Perm("campaigns:read"), Handler: s.getCampaign},
		{Method: "POST", Path: "/api/campaigns", Access: Perm("campaigns:create"), Handler: s.createCampaign},
		{Method: "PUT", Path: "/api/campaigns/:id", Access: Perm("campaigns:update"), Handler: s.updateCampaign},
		{Method: "DELETE", Path: "/api/campaigns/:id", Access: Perm("campaigns:delete"), Handler: s.deleteCampaign},
		{Method: "POST", Path: "/api/campaigns/:id/recipients/import", Access: Perm("campaigns:update"), Bulk: true, Handler: s.importRecipients},
		{Method: "GET", Path: "/api/campaigns/:id/recipients", Access: Perm("campaigns:read"), Handler: s.listRecipients},
		{Method: "POST", Path: "/api/campaigns/:id/start", Access: Perm("campaigns:update"), Bulk: true, Handler: s.campaignAction(startCampaign)},
		{Method: "POST", Path: "/api/campaigns/:id/resume", Access: Perm("campaigns:update"), Bulk: true, Handler: s.campaignAction(startCampaign)},
		{Method: "POST", Path: "/api/campaigns/:id/pause", Access: Perm("campaigns:update"), Handler: s.campaignAction(pauseCampaign)},
		{Method: "POST", Path: "/api/campaigns/:id/cancel", Access: Perm("campaigns:update"), Handler: s.campaignAction(cancelCampaign)},
		{Method: "POST", Path: "/api/campaigns/:id/resend-unknown", Access: Perm("campaigns:update"), Bulk: true, Handler: s.resendUnknown},
		{Method: "GET", Path: "/api/campaigns/:id/progress", Access: Perm("campaigns:read"), Handler: s.campaignProgress},
		{Method: "GET", Path: "/api/campaigns/:id/progress/stream", Access: Perm("campaigns:read"), Handler: s.campaignProgressStream},

		// Outbound webhooks
		{Method: "GET", Path: "/api/webhooks", Access: Perm("webhooks:read"), Handler: s.listWebhooks},
		{Method: "POST", Path: "/api/webhooks", Access: Perm("webhooks:create"), Handler: s.createWebhook},
		{Method: "GET", Path: "/api/webhooks/:id", Access: Perm("webhooks:read"), Handler: s.getWebhook},
		{Method: "PUT", Path: "/api/webhooks/:id", Access: Perm("webhooks:update"), Handler: s.updateWebhook},
		{Method: "DELETE", Path: "/api/webhooks/:id", Access: Perm("webhooks:delete"), Handler: s.deleteWebhook},
		{Method: "POST", Path: "/api/webhooks/:id/test", Access: Perm("webhooks:update"), Handler: s.testWebhook},
		{Method: "GET", Path: "/api/webhooks/:id/deliveries", Access: Perm("webhooks:read"), Handler: s.webhookDeliveries},
	}
}

// Routes lists the router table.
func (s *Server) Routes() []RouteInfo {
	rs := s.routes()
	out := make([]RouteInfo, len(rs))
	for i, r := range rs {
		out[i] = RouteInfo{Method: r.Method, Path: r.Path, Access: r.Access, Bulk: r.Bulk, SessionOnly: r.SessionOnly, Unlimited: r.Unlimited}
	}
	return out
}

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
	r.Use(s.requestLog, s.recoverPanic)
	r.NoRoute(s.identify, s.rateLimit(false), func(c *gin.Context) { s.fail(c, errNoRoute) })
	r.NoMethod(func(c *gin.Context) {
		c.AbortWithStatusJSON(http.StatusMethodNotAllowed, envelope{Status: "error", Message: "method not allowed", Data: nil})
	})

	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	if s.Monitoring != nil {
		mon := []gin.HandlerFunc{s.monitoringGate, gin.WrapH(s.Monitoring)}
		r.Any("/monitoring", mon...)
		r.Any("/monitoring/*path", mon...)
	}
	for _, rt := range s.routes() {
		if rt.Unlimited {
			r.Handle(rt.Method, rt.Path, s.authorize(rt), rt.Handler)
			continue
		}
		r.Handle(rt.Method, rt.Path, s.identify, s.rateLimit(rt.Bulk), s.authorize(rt), rt.Handler)
	}
	return r
}

func (s *Server) healthz(c *gin.Context) { ok(c, http.StatusOK, gin.H{"status": "alive"}) }

// readyz reports whether PostgreSQL and Redis answer; a load balancer stops
// sending traffic to a replica that cannot reach them. A missing ffmpeg is
// reported but keeps the replica ready: only audio uploads need it.
func (s *Server) readyz(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	var down []string
	if err := database.Ping(ctx, s.DB); err != nil {
		down = append(down, "database")
	}
	if err := s.Redis.Ping(ctx).Err(); err != nil {
		down = append(down, "redis")
	}
	if len(down) > 0 {
		c.AbortWithStatusJSON(http.StatusServiceUnavailable, envelope{Status: "error",
			Message: "not ready: " + strings.Join(down, " and ") + " unreachable", Data: nil})
		return
	}
	ffmpeg := "ok"
	if !s.settings.AudioEnabled() {
		ffmpeg = "missing: audio uploads are disabled"
	}
	ok(c, http.StatusOK, gin.H{"database": "ok", "redis": "ok", "ffmpeg": ffmpeg})
}
