package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/authguard"
)

// measure records every answered request in the metrics, by route template
// (gin's FullPath: /api/contacts/:id is one series, not one per contact),
// method and status. It runs first, so that it also sees the 500 of a
// recovered panic and the requests refused by the middleware after it.
func (s *Server) measure(c *gin.Context) {
	start := time.Now()
	c.Next()
	s.metrics.HTTPRequest(c.FullPath(), c.Request.Method, c.Writer.Status(), time.Since(start))
}

// requestLog assigns a request id, gives handlers the logger (web.Log) and
// logs each request once it is answered.
func (s *Server) requestLog(c *gin.Context) {
	id := c.GetHeader("X-Request-ID")
	if id == "" || len(id) > 64 {
		id = uuid.NewString()
	}
	c.Set(web.KeyRequestID, id)
	c.Header("X-Request-ID", id)
	c.Request = c.Request.WithContext(web.WithLogger(c.Request.Context(), s.log))
	start := time.Now()
	c.Next()
	level := slog.LevelInfo
	switch {
	case c.Writer.Status() >= 500:
		level = slog.LevelError
	case c.FullPath() == "/healthz" || c.FullPath() == "/readyz":
		level = slog.LevelDebug // probes every few seconds; a failing one is still an error
	}
	s.log.Log(c.Request.Context(), level, "http request", "request_id", id, "method", c.Request.Method,
		"path", c.Request.URL.Path, "status", c.Writer.Status(), "duration", time.Since(start),
		"client_ip", c.ClientIP())
}

// recoverPanic turns a handler panic into a 500 in the error envelope.
func (s *Server) recoverPanic(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			s.log.Error("panic in handler", "request_id", c.GetString(web.KeyRequestID), "panic", r, "stack", string(debug.Stack()))
			web.Fail(c, fmt.Errorf("panic: %v", r))
		}
	}()
	c.Next()
}

// identify authenticates the credentials a request carries, if any, without
// refusing anything: the rate limiter must know who is calling (or fall back
// to the client address) before authorize turns a bad credential into a 401.
func (s *Server) identify(c *gin.Context) {
	ctx := c.Request.Context()
	var p *identity.Principal
	var err error
	if key := c.GetHeader("X-API-Key"); key != "" {
		p, err = s.Identity.AuthenticateAPIKey(ctx, key)
	} else if h := c.GetHeader("Authorization"); h != "" {
		if len(h) > 6 && strings.EqualFold(h[:6], "token ") {
			p, err = s.frappeToken(c, strings.TrimSpace(h[6:]))
		} else if token, found := strings.CutPrefix(h, "Bearer "); !found || token == "" {
			err = apperr.Unauthorizedf("authorization header must be 'Bearer <token>' or 'token <api_key>:<api_secret>'")
		} else {
			p, err = s.Identity.AuthenticateAccessToken(ctx, token)
		}
	}
	switch {
	case err != nil:
		c.Set(web.KeyAuthError, err)
	case p != nil:
		c.Set(web.KeyPrincipal, p)
	}
	c.Next()
}

// frappeToken authenticates Frappe's "token <api_key>:<api_secret>" (an API
// key's id and the key: identity.AuthenticateAPIToken). Failures are
// counted per address and per (key id, address) like sign-ins
// (authguard.APIToken); a locked caller is refused before any lookup. When
// Redis does not answer, the check runs unguarded rather than refusing
// everyone.
func (s *Server) frappeToken(c *gin.Context, cred string) (*identity.Principal, error) {
	ctx := c.Request.Context()
	key, secret, ok := strings.Cut(cred, ":")
	attempt := authguard.Attempt{Account: key, Address: c.ClientIP()}
	locked, wait, gerr := s.tokenGuard.Locked(ctx, attempt)
	if gerr != nil {
		s.log.Warn("API token guard unavailable; checking the token unguarded", "error", gerr)
	}
	if locked {
		return nil, apperr.TooManyAfter(wait, "too many failed token authentications; retry in %d seconds", int(wait.Seconds()+0.999))
	}
	var p *identity.Principal
	var err error = apperr.Unauthorizedf("authorization header must be 'token <api_key>:<api_secret>'")
	if ok && key != "" && secret != "" {
		p, err = s.Identity.AuthenticateAPIToken(ctx, key, secret)
	}
	if apperr.Is(err, apperr.Unauthorized) && gerr == nil {
		if ferr := s.tokenGuard.Fail(ctx, attempt); ferr != nil {
			s.log.Warn("cannot count a failed API token", "error", ferr)
		}
	}
	return p, err
}

// rateLimit applies the standard or bulk allowance of the caller: the API key
// or user when identified, else the client address. Every answer carries the
// X-RateLimit headers.
func (s *Server) rateLimit(bulk bool, fail func(*gin.Context, error)) gin.HandlerFunc {
	limit, class := s.cfg.RateLimitPerMinute, "std"
	if bulk {
		limit, class = s.cfg.RateLimitBulkPerMinute, "bulk"
	}
	return func(c *gin.Context) {
		var who string
		if v, ok := c.Get(web.KeyPrincipal); ok {
			p := v.(*identity.Principal)
			if p.APIKeyID != nil {
				who = "key:" + p.APIKeyID.String()
			} else {
				who = "user:" + p.UserID.String()
			}
		} else {
			who = "ip:" + c.ClientIP()
		}
		res, err := s.limiter.AllowPerMinute(c.Request.Context(), "wharf:"+class+":"+who, limit)
		if err != nil {
			// Redis trouble must not take the API down with it: let the
			// request through and say so in the logs.
			s.log.Warn("rate limiter unavailable; request allowed", "error", err)
			c.Header("X-RateLimit-Limit", strconv.Itoa(limit))
			c.Next()
			return
		}
		c.Header("X-RateLimit-Limit", strconv.Itoa(res.Limit))
		c.Header("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
		c.Header("X-RateLimit-Reset", strconv.FormatInt(res.Reset.Add(time.Second-1).Unix(), 10))
		if !res.Allowed {
			c.Header("Retry-After", strconv.Itoa(int(res.RetryAfter.Seconds()+0.999)))
			fail(c, apperr.TooManyf("rate limit exceeded: %d requests per minute; retry in %d seconds",
				limit, int(res.RetryAfter.Seconds()+0.999)))
			return
		}
		c.Next()
	}
}

// authorize enforces a route's Access: 401 without valid credentials, 403
// without the permission.
func (s *Server) authorize(r web.Route) gin.HandlerFunc {
	fail := r.Failer()
	return func(c *gin.Context) {
		if !r.Access.NeedsAuth() {
			c.Next()
			return
		}
		v, ok := c.Get(web.KeyPrincipal)
		if !ok {
			if err, ok := c.Get(web.KeyAuthError); ok {
				fail(c, err.(error))
			} else {
				fail(c, apperr.Unauthorizedf("authentication required: send 'Authorization: Bearer <token>' or 'X-API-Key: <key>'"))
			}
			return
		}
		p := v.(*identity.Principal)
		if r.SessionOnly && p.ViaAPIKey() {
			fail(c, apperr.Forbiddenf("this endpoint needs a user session; API keys cannot use it"))
			return
		}
		if !r.Access.Allows(p, c) {
			fail(c, apperr.Forbiddenf("insufficient permissions: requires %s", strings.ReplaceAll(r.Access.String(), "`", "")))
			return
		}
		c.Next()
	}
}
