// Command worker runs the background jobs. On SIGTERM it stops taking tasks,
// gives in-flight ones SHUTDOWN_TIMEOUT to finish, and returns the rest to
// their queue.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"wharf/app"
	"wharf/internal/infra/config"
	"wharf/internal/integration/notify"
)

func main() {
	// bin/worker eval-conditions: a process the worker starts to evaluate
	// notification conditions under a memory limit (internal/integration/notify).
	if notify.IsEvaluator(os.Args) {
		os.Exit(notify.ServeEvaluator(os.Stdin, os.Stdout))
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.LoadWorker()
	if err != nil {
		return err
	}
	log := app.Logger(cfg.Common)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	w, err := app.NewWorker(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer w.Close()
	log.Info("worker started", "concurrency", cfg.Concurrency)
	err = w.Run(ctx)
	log.Info("worker stopped")
	return err
}
