package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/authguard"
	"wharf/internal/infra/ratelimit"
)

// monitor guards the asynq web UI. A browser cannot attach a bearer token
// to the UI's own requests, so the UI also accepts HTTP Basic with a super
// admin's email and password, or with the operator credential from
// MONITORING_USER / MONITORING_PASSWORD.
//
// Basic sign-ins are guarded against guessing (authguard.Monitoring): the
// failure counters of the account and of the address are checked before any
// password is, and every failure gets the same 401, so neither the status
// nor the timing of a refusal tells whether the password was right.
// Verified Basic credentials are remembered for a minute (by hash) so the
// UI's polling does not run argon2 on every request; a remembered credential
// is still refused while its account or address is locked.
type monitor struct {
	ui             http.Handler // nil: no job monitor
	identity       *identity.Service
	guard          *authguard.Guard
	opUser, opPass string
	origins        web.Origins

	mu    sync.Mutex
	valid map[[32]byte]time.Time
}

func newMonitor(ui http.Handler, ids *identity.Service, limiter *ratelimit.Limiter, cfg Config) *monitor {
	return &monitor{ui: ui, identity: ids, guard: authguard.New(limiter, "wharf:authfail:monitoring", authguard.Monitoring()),
		opUser: cfg.MonitoringUser, opPass: cfg.MonitoringPassword,
		origins: web.NewOrigins(cfg.PublicURL, cfg.TrustedProxies), valid: map[[32]byte]time.Time{}}
}

const monitoringCacheTTL = time.Minute

func (m *monitor) remembered(k [32]byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.valid[k]
	if ok && time.Now().Before(exp) {
		return true
	}
	delete(m.valid, k)
	return false
}

func (m *monitor) remember(k [32]byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	for key, exp := range m.valid {
		if now.After(exp) {
			delete(m.valid, key)
		}
	}
	m.valid[k] = now.Add(monitoringCacheTTL)
}

// errMonitoringAuth is the one answer to every failed sign-in to the job
// monitor: no credentials, unknown user, wrong password, disabled account,
// not a super admin, invalid bearer token, locked account or address.
var errMonitoringAuth = apperr.Unauthorizedf("sign in with a super admin's email and password")

// gate lets super admins and the operator through to the UI.
func (m *monitor) gate(c *gin.Context) {
	ctx := c.Request.Context()
	deny := func() {
		c.Header("WWW-Authenticate", `Basic realm="Wharf monitoring", charset="UTF-8"`)
		web.Fail(c, errMonitoringAuth)
	}
	if h := c.GetHeader("Authorization"); strings.HasPrefix(h, "Bearer ") {
		// A bearer token is not sent by the browser on its own, so it needs
		// no cross-site check; it cannot be guessed, so it is not counted.
		p, err := m.identity.AuthenticateAccessToken(ctx, strings.TrimPrefix(h, "Bearer "))
		switch {
		case err != nil && !apperr.Is(err, apperr.Unauthorized):
			web.Fail(c, err)
		case err != nil || !p.IsSuperAdmin:
			deny()
		default:
			c.Next()
		}
		return
	}
	user, pass, hasBasic := c.Request.BasicAuth()
	if !hasBasic {
		deny()
		return
	}
	// The browser attaches Basic credentials to any request for this
	// origin, including one a foreign page's form makes it send.
	if !web.SafeMethod(c.Request.Method) && !m.sameOrigin(c) {
		web.Fail(c, apperr.Forbiddenf("cross-site request refused"))
		return
	}
	attempt := authguard.Attempt{Account: user, Address: c.ClientIP()}
	if locked, _, err := m.guard.Locked(ctx, attempt); err != nil {
		// As with the rate limiter, Redis trouble does not lock everyone
		// out; the argon2 semaphore still bounds the work.
		web.Log(c).Warn("sign-in guard unavailable; attempt allowed", "error", err)
	} else if locked {
		deny()
		return
	}
	key := sha256.Sum256([]byte(user + "\x00" + pass))
	if m.remembered(key) {
		c.Next()
		return
	}
	ok, err := m.verify(c, user, pass)
	if err != nil {
		web.Fail(c, err)
		return
	}
	if !ok {
		if err := m.guard.Fail(ctx, attempt); err != nil {
			web.Log(c).Warn("cannot count a failed sign-in", "error", err)
		}
		deny()
		return
	}
	m.remember(key)
	c.Next()
}

// verify checks the operator credential, then a super admin's email and
// password. ok is false for every kind of wrong credential; err is only for
// failures of the system itself.
func (m *monitor) verify(c *gin.Context, user, pass string) (ok bool, err error) {
	if m.opUser != "" &&
		subtle.ConstantTimeCompare([]byte(user), []byte(m.opUser)) == 1 &&
		subtle.ConstantTimeCompare([]byte(pass), []byte(m.opPass)) == 1 {
		return true, nil
	}
	isSuper, err := m.identity.VerifyLogin(c.Request.Context(), user, pass)
	if apperr.Is(err, apperr.Unauthorized) {
		return false, nil
	}
	return err == nil && isSuper, err
}

// sameOrigin reports whether a request's Origin (or, when a browser sent
// none, its Referer) is this service.
func (m *monitor) sameOrigin(c *gin.Context) bool {
	src := c.GetHeader("Origin")
	if src == "" {
		src = c.GetHeader("Referer")
	}
	return m.origins.Ours(c, src)
}
