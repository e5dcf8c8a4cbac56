// Command callbridge carries the media of voice calls (docs/CALLING.md). On
// SIGTERM it ends the calls it carries (their media cannot move to another
// instance), tells the provider, and leaves.
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
		fmt.Fprintln(os.Stderr, "callbridge:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := config.LoadCallBridge()
	if err != nil {
		return err
	}
	log := app.Logger(cfg.Common)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cb, err := app.NewCallBridge(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer cb.Close()
	log.Info("callbridge started", "http_addr", cb.HTTPAddr, "udp_ports", fmt.Sprintf("%d-%d", cfg.UDPPortMin, cfg.UDPPortMax))
	err = cb.Run(ctx)
	log.Info("callbridge stopped")
	return err
}
