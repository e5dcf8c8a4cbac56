// Command platformsim serves the provider simulator (package platformsim)
// over HTTP for the local demo, `make run` and benchmarks. It seeds a demo
// business account, phone number and oauth code, and is configured from
// PLATFORMSIM_* environment variables (see docs/SIMULATOR.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wharf/platformsim"
)

// The demo data other components' defaults and docs refer to.
const (
	demoWABAID      = "200000000000001"
	demoToken       = "sim-demo-token"
	demoPhoneID     = "300000000000001"
	demoDisplay     = "+1 555-000-0001"
	demoName        = "Wharf Demo"
	demoOAuthCode   = "demo-code"
	demoOAuthToken  = "sim-demo-user-token"
	shutdownTimeout = 10 * time.Second
)

type config struct {
	addr    string
	baseURL string
	sim     platformsim.Config
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "platformsim:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	log, err := newLogger(os.Getenv("PLATFORMSIM_LOG_LEVEL"))
	if err != nil {
		return err
	}
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	cfg.sim.Logger = log

	sim := platformsim.New(cfg.sim)
	defer sim.Close()
	sim.SetBaseURL(cfg.baseURL)
	seed(sim, log)

	srv := &http.Server{Addr: cfg.addr, Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("platformsim listening", "addr", cfg.addr, "base_url", cfg.baseURL,
		"webhook_url", cfg.sim.WebhookURL, "throughput_per_second", cfg.sim.ThroughputPerSecond)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("platformsim shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadConfig reads the PLATFORMSIM_* variables through getenv.
func loadConfig(getenv func(string) string) (config, error) {
	c := config{
		addr: envOr(getenv, "PLATFORMSIM_ADDR", "127.0.0.1:8090"),
		sim: platformsim.Config{
			AppID:      envOr(getenv, "PLATFORMSIM_APP_ID", platformsim.DefaultAppID),
			AppSecret:  envOr(getenv, "PLATFORMSIM_APP_SECRET", platformsim.DefaultAppSecret),
			WebhookURL: getenv("PLATFORMSIM_WEBHOOK_URL"),
		},
	}
	c.baseURL = envOr(getenv, "PLATFORMSIM_BASE_URL", platformsim.DefaultBaseURL(c.addr))
	var errs []error
	intVar := func(name string, def int, dst *int) {
		v := getenv(name)
		if v == "" {
			*dst = def
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s must be an integer, got %q", name, v))
			return
		}
		*dst = n
	}
	msVar := func(name string, def time.Duration, dst *time.Duration) {
		n := int(def / time.Millisecond)
		intVar(name, n, &n)
		*dst = time.Duration(n) * time.Millisecond
	}
	intVar("PLATFORMSIM_THROUGHPUT", platformsim.DefaultThroughputPerSecond, &c.sim.ThroughputPerSecond)
	intVar("PLATFORMSIM_STATUS_BATCH_SIZE", 1, &c.sim.StatusBatchSize)
	// Status delays a person watching the demo can follow.
	msVar("PLATFORMSIM_SENT_AFTER_MS", 200*time.Millisecond, &c.sim.SentAfter)
	msVar("PLATFORMSIM_DELIVERED_AFTER_MS", time.Second, &c.sim.DeliveredAfter)
	msVar("PLATFORMSIM_READ_AFTER_MS", 3*time.Second, &c.sim.ReadAfter)
	msVar("PLATFORMSIM_TEMPLATE_APPROVAL_DELAY_MS", platformsim.DefaultTemplateApprovalDelay, &c.sim.TemplateApprovalDelay)
	msVar("PLATFORMSIM_LATENCY_MS", 0, &c.sim.Latency)
	if v := getenv("PLATFORMSIM_ERROR_RATE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			errs = append(errs, fmt.Errorf("PLATFORMSIM_ERROR_RATE must be between 0 and 1, got %q", v))
		}
		c.sim.ErrorRate = f
	}
	if u := c.sim.WebhookURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		errs = append(errs, fmt.Errorf("PLATFORMSIM_WEBHOOK_URL must be an http(s) URL, got %q", u))
	}
	return c, errors.Join(errs...)
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if level != "" {
		if err := l.UnmarshalText([]byte(level)); err != nil {
			return nil, fmt.Errorf("PLATFORMSIM_LOG_LEVEL: %w", err)
		}
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// seed adds the demo account the defaults of the other binaries and the
// docs refer to.
func seed(sim *platformsim.Simulator, log *slog.Logger) {
	ba := sim.AddBusinessAccount(platformsim.BusinessAccount{
		ID:          demoWABAID,
		Name:        demoName,
		AccessToken: demoToken,
		PhoneNumbers: []platformsim.PhoneNumber{{
			ID:                 demoPhoneID,
			DisplayPhoneNumber: demoDisplay,
			VerifiedName:       demoName,
			MessagingLimitTier: "TIER_1K",
		}},
	})
	sim.AddOAuthCode(platformsim.OAuthCode{Code: demoOAuthCode, AccessToken: demoOAuthToken, WABAIDs: []string{ba.ID}})
	log.Info("platformsim seeded demo business account",
		"waba_id", ba.ID, "name", ba.Name, "access_token", ba.AccessToken,
		"phone_number_id", ba.PhoneNumbers[0].ID, "display_phone_number", ba.PhoneNumbers[0].DisplayPhoneNumber,
		"oauth_code", demoOAuthCode, "oauth_access_token", demoOAuthToken)
}
