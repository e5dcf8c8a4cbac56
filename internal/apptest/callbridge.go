package apptest

import (
	"context"
	"fmt"
	"maps"
	"time"

	"wharf/app"
	"wharf/internal/infra/config"
	"wharf/internal/testenv"
)

// StartCallBridge runs a callbridge in-process until the test ends, on
// loopback with any free UDP port, recording into the test's temporary
// directory; extra overrides its environment.
func (e *Env) StartCallBridge(extra map[string]string) *app.CallBridge {
	e.T.Helper()
	env := map[string]string{"HTTP_ADDR": "127.0.0.1:0", "CALLBRIDGE_UDP_PORT_MIN": "0", "CALLBRIDGE_UDP_PORT_MAX": "0",
		"CALL_RECORDING_DIR": e.T.TempDir()}
	maps.Copy(env, e.Environ)
	maps.Copy(env, extra)
	cfg, err := config.LoadCallBridgeFrom(env)
	if err != nil {
		e.T.Fatalf("callbridge config: %v", err)
	}
	cb, err := app.NewCallBridge(context.Background(), cfg, testenv.Quiet())
	if err != nil {
		e.T.Fatalf("start callbridge: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cb.Run(ctx) }()
	e.T.Cleanup(func() {
		cancel()
		<-done
		cb.Close()
	})
	return cb
}

// StartCallBridgeProcess runs bin/callbridge as its own OS process (to be
// killed like a crash) and returns it once it answers /readyz.
func (e *Env) StartCallBridgeProcess(extra map[string]string) *Process {
	e.T.Helper()
	port := freePort(e.T)
	env := map[string]string{"HTTP_ADDR": fmt.Sprintf("127.0.0.1:%d", port), "CALLBRIDGE_UDP_PORT_MIN": "0",
		"CALLBRIDGE_UDP_PORT_MAX": "0", "CALL_RECORDING_DIR": e.T.TempDir()}
	maps.Copy(env, extra)
	p := e.startProcess("callbridge", env)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	Eventually(e.T, 30*time.Second, "the callbridge process to answer", func() bool {
		return app.Probe(context.Background(), base+"/readyz") == nil
	})
	return p
}
