package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/internal/apperr"
	"wharf/internal/identity"
)

// monitoringAuth guards the asynq web UI. A browser cannot attach a bearer
// token to the UI's own requests, so the UI also accepts HTTP Basic with a
// super admin's email and password, or with the operator credential from
// MONITORING_USER / MONITORING_PASSWORD. Verified Basic credentials are
// remembered for a minute (by hash) so the UI's polling does not run argon2
// on every request.
type monitoringAuth struct {
	identity       *identity.Service
	opUser, opPass string

	mu    sync.Mutex
	valid map[[32]byte]time.Time
}

func newMonitoringAuth(id *identity.Service, user, pass string) *monitoringAuth {
	return &monitoringAuth{identity: id, opUser: user, opPass: pass, valid: map[[32]byte]time.Time{}}
}

const monitoringCacheTTL = time.Minute

func (m *monitoringAuth) remembered(k [32]byte) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.valid[k]
	if ok && time.Now().Before(exp) {
		return true
	}
	delete(m.valid, k)
	return false
}

func (m *monitoringAuth) remember(k [32]byte) {
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

func (s *Server) monitoringGate(c *gin.Context) {
	ctx := c.Request.Context()
	deny := func(err error) {
		if apperr.Is(err, apperr.Unauthorized) {
			c.Header("WWW-Authenticate", `Basic realm="Wharf monitoring", charset="UTF-8"`)
			// Failed attempts draw on the client's allowance, which stops
			// password guessing through this door.
			if res, lerr := s.limiter.AllowPerMinute(ctx, "wharf:monfail:"+c.ClientIP(), s.cfg.RateLimitPerMinute); lerr == nil && !res.Allowed {
				err = apperr.TooManyf("too many failed attempts; retry later")
			}
		}
		s.fail(c, err)
	}
	if h := c.GetHeader("Authorization"); strings.HasPrefix(h, "Bearer ") {
		p, err := s.identity.AuthenticateAccessToken(ctx, strings.TrimPrefix(h, "Bearer "))
		switch {
		case err != nil:
			deny(err)
		case !p.IsSuperAdmin:
			deny(apperr.Forbiddenf("the job monitor is for super admins only"))
		default:
			c.Next()
		}
		return
	}
	user, pass, hasBasic := c.Request.BasicAuth()
	if !hasBasic {
		deny(apperr.Unauthorizedf("sign in with a super admin's email and password"))
		return
	}
	if m := s.monAuth; m.opUser != "" &&
		subtle.ConstantTimeCompare([]byte(user), []byte(m.opUser)) == 1 &&
		subtle.ConstantTimeCompare([]byte(pass), []byte(m.opPass)) == 1 {
		c.Next()
		return
	}
	key := sha256.Sum256([]byte(user + "\x00" + pass))
	if s.monAuth.remembered(key) {
		c.Next()
		return
	}
	isSuper, err := s.identity.VerifyLogin(ctx, user, pass)
	switch {
	case err != nil:
		deny(err)
	case !isSuper:
		deny(apperr.Forbiddenf("the job monitor is for super admins only"))
	default:
		s.monAuth.remember(key)
		c.Next()
	}
}
