package app_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"wharf/app"
	"wharf/internal/testenv"
)

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestHealthEndpointReflectsTheCheck(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var failing atomic.Bool
	app.ServeHealth(ctx, addr, testenv.Quiet(), func(context.Context) error {
		if failing.Load() {
			return errors.New("redis: down")
		}
		return nil
	})
	url := "http://" + addr + "/healthz"
	deadline := time.Now().Add(3 * time.Second)
	for app.Probe(ctx, url) != nil {
		if time.Now().After(deadline) {
			t.Fatal("health endpoint never answered 200")
		}
		time.Sleep(20 * time.Millisecond)
	}
	failing.Store(true)
	if err := app.Probe(ctx, url); err == nil {
		t.Fatal("probe passed while the check fails")
	}
}
