package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"wharf/internal/infra/metrics"
)

// ServeOps starts a process's operator listener on addr: GET /healthz when
// check is set (200 when it passes, 503 otherwise) and GET /metrics when m
// is set. The worker and scheduler serve both on HEALTH_ADDR (they serve
// no API; container platforms probe /healthz); the api serves only
// /metrics, on METRICS_ADDR, away from its public listener.
//
// It binds before returning, so that a taken or malformed address stops
// the start-up instead of becoming a log line; it returns the bound address
// (the port when addr asked for :0) and the function that shuts it down.
// An empty addr serves nothing. With profile, it also serves Go's
// profiler under /debug/pprof/ (PPROF_ENABLED), on this listener only:
// profiles reveal too much for the public one.
func ServeOps(addr string, log *slog.Logger, check func(context.Context) error, m *metrics.Set, profile bool) (string, func(), error) {
	if addr == "" {
		return "", func() {}, nil
	}
	mux := http.NewServeMux()
	if check != nil {
		// /readyz answers the same as /healthz: a process without its
		// database or Redis can do nothing, so it is neither.
		probe := func(w http.ResponseWriter, r *http.Request) {
			cctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			w.Header().Set("Content-Type", "application/json")
			if err := check(cctx); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, `{"status":"error","message":%q,"data":null}`, err.Error())
				return
			}
			fmt.Fprint(w, `{"status":"success","data":{"status":"alive"}}`)
		}
		mux.HandleFunc("GET /healthz", probe)
		mux.HandleFunc("GET /readyz", probe)
	}
	if m != nil {
		mux.Handle("GET /metrics", m.Handler())
	}
	if profile {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("operator listener: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("operator listener failed", "addr", addr, "error", err)
		}
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return l.Addr().String(), stop, nil
}

// Probe GETs url and fails unless it answers 2xx; `api healthcheck` uses it
// so that container images need no curl.
func Probe(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s answered %s", url, res.Status)
	}
	return nil
}
