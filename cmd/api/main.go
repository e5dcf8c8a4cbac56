// Command api serves the HTTP API, the inbound platform webhook and the asynq
// web UI. `api migrate` only applies migrations; `api check-deps` reports
// whether PostgreSQL and Redis answer (used by `make run`); `api healthcheck
// URL` probes a health endpoint (used by container healthchecks).
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"wharf/app"
	"wharf/internal/infra/config"
	"wharf/internal/infra/database"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "api:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	switch cmd {
	case "check-deps":
		return checkDeps(ctx)
	case "healthcheck":
		url := "http://127.0.0.1:8080/readyz"
		if len(args) > 1 {
			url = args[1]
		}
		return app.Probe(ctx, url)
	}
	cfg, err := config.LoadAPI()
	if err != nil {
		return err
	}
	log := app.Logger(cfg.Common)
	switch cmd {
	case "":
	case "migrate", "-migrate", "--migrate":
		return app.Migrate(ctx, cfg.DatabaseURL, log)
	default:
		return fmt.Errorf("unknown command %q (use: api, api migrate, api check-deps, api healthcheck [url])", cmd)
	}

	a, err := app.NewAPI(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.Close()
	srv := app.NewHTTPServer(cfg, a.Handler)
	srv.RegisterOnShutdown(a.Drain)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("api listening", "addr", cfg.HTTPAddr, "metrics_addr", a.MetricsAddr)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("api shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkDeps prints one line per dependency and fails when one is down. It
// needs only DATABASE_URL and REDIS_URL.
func checkDeps(ctx context.Context) error {
	c, _ := config.LoadSchedulerFrom(nil) // the smallest config with both URLs
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var failed []string
	if err := database.EnsureDatabase(ctx, c.DatabaseURL); err != nil {
		fmt.Println("postgres: unreachable:", err)
		failed = append(failed, "postgres")
	} else {
		fmt.Println("postgres: ok")
	}
	if err := app.PingRedis(ctx, c.RedisURL); err != nil {
		fmt.Println("redis: unreachable:", err)
		failed = append(failed, "redis")
	} else {
		fmt.Println("redis: ok")
	}
	if len(failed) > 0 {
		return fmt.Errorf("unreachable: %v", failed)
	}
	return nil
}
