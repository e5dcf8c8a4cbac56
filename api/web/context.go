package web

import (
	"context"
	"log/slog"

	"github.com/gin-gonic/gin"

	"wharf/internal/identity"
)

// Keys of the values the middleware stores in the gin context.
const (
	// KeyRequestID holds the request id (X-Request-ID).
	KeyRequestID = "request_id"
	// KeyPrincipal holds the authenticated *identity.Principal.
	KeyPrincipal = "principal"
	// KeyAuthError holds the error of credentials that failed to
	// authenticate; authorize answers it when the route needs a principal.
	KeyAuthError = "auth_error"
)

// Principal returns the authenticated caller; routes whose Access needs
// authentication always have one.
func Principal(c *gin.Context) *identity.Principal {
	p, _ := c.Get(KeyPrincipal)
	return p.(*identity.Principal)
}

type loggerKey struct{}

// WithLogger returns ctx carrying log; the request-log middleware puts the
// server's logger in every request's context.
func WithLogger(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, log)
}

// Log returns the request's logger. A handler mounted without the request-log
// middleware (a unit test's router) gets slog's default logger.
func Log(c *gin.Context) *slog.Logger {
	if log, ok := c.Request.Context().Value(loggerKey{}).(*slog.Logger); ok {
		return log
	}
	return slog.Default()
}
