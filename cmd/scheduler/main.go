// Command scheduler enqueues periodic and time-based jobs while it holds the
// leader lease; run as many replicas as you like, one fires at a time.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"wharf/app"
	"wharf/internal/infra/config"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.LoadScheduler()
	if err != nil {
		return err
	}
	log := app.Logger(cfg.Common)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	s, err := app.NewScheduler(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer s.Close()
	log.Info("scheduler started")
	err = s.Run(ctx)
	log.Info("scheduler stopped")
	return err
}
