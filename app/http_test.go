package app_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"wharf/app"
	"wharf/internal/infra/config"
	"wharf/internal/testenv"
)

func serverConfig(t *testing.T, environ map[string]string) config.API {
	environ["JWT_SECRET"], environ["ENCRYPTION_KEY"] = testenv.RandomKey(), testenv.RandomKey()
	c, err := config.LoadAPIFrom(environ)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHTTPServerSetsEveryTimeout(t *testing.T) {
	srv := app.NewHTTPServer(serverConfig(t, map[string]string{}), http.NotFoundHandler())
	if srv.ReadHeaderTimeout != 10*time.Second || srv.ReadTimeout != 2*time.Minute || srv.WriteTimeout != 3*time.Minute ||
		srv.IdleTimeout != 2*time.Minute {
		t.Fatalf("timeouts: header %s read %s write %s idle %s", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	if _, err := config.LoadAPIFrom(map[string]string{"JWT_SECRET": testenv.RandomKey(), "ENCRYPTION_KEY": testenv.RandomKey(),
		"HTTP_READ_TIMEOUT": "2m", "HTTP_WRITE_TIMEOUT": "1m"}); err == nil {
		t.Fatal("a write timeout shorter than the read timeout was accepted")
	}
}

// Clients that send their headers or body slowly, or sit idle on a
// keep-alive connection, are cut off after the configured timeouts.
func TestHTTPServerCutsOffSlowAndIdleClients(t *testing.T) {
	c := serverConfig(t, map[string]string{"HTTP_READ_TIMEOUT": "300ms", "HTTP_WRITE_TIMEOUT": "300ms", "HTTP_IDLE_TIMEOUT": "300ms"})
	srv := app.NewHTTPServer(c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "slow body", http.StatusRequestTimeout)
			return
		}
		w.Write([]byte("ok"))
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()

	// closedWithin sends what, then reads until the server closes the
	// connection, failing if it is still open after limit.
	closedWithin := func(name, what string, limit time.Duration) {
		t.Helper()
		conn, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(what)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_ = conn.SetReadDeadline(start.Add(limit))
		_, err = io.ReadAll(conn)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: connection still open after %s", name, limit)
		}
	}
	closedWithin("headers never finished", "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ", 3*time.Second)
	closedWithin("body never finished", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789", 3*time.Second)
	closedWithin("idle keep-alive", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 3*time.Second)
}
