package app

import (
	"net/http"
	"time"

	"wharf/internal/infra/config"
)

// maxHeaderWait bounds reading a request's headers: a client that sends
// them slowly (slow loris) holds a connection at most this long.
const maxHeaderWait = 10 * time.Second

// NewHTTPServer is the api's HTTP server with every timeout set, so that no
// client can hold a connection open indefinitely: headers within 10 s (or
// the read timeout when shorter), the whole request within
// HTTP_READ_TIMEOUT, the answer within HTTP_WRITE_TIMEOUT of the headers
// (streaming answers lift this for themselves), and an idle keep-alive
// connection is closed after HTTP_IDLE_TIMEOUT.
func NewHTTPServer(c config.API, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              c.HTTPAddr,
		Handler:           handler,
		ReadHeaderTimeout: min(maxHeaderWait, c.HTTPReadTimeout),
		ReadTimeout:       c.HTTPReadTimeout,
		WriteTimeout:      c.HTTPWriteTimeout,
		IdleTimeout:       c.HTTPIdleTimeout,
	}
}
