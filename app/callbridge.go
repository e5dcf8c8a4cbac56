package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"

	"github.com/google/uuid"

	"wharf/callbridge"
	"wharf/callbridge/media"
	"wharf/internal/accounts"
	"wharf/internal/calling"
	"wharf/internal/contacts"
	"wharf/internal/identity"
	"wharf/internal/infra/config"
	"wharf/internal/infra/live"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/safehttp"
	"wharf/internal/infra/secrets"
	"wharf/internal/orgsettings"
	"wharf/internal/teams"
	"wharf/internal/webhooks"
	"wharf/platform"
)

// CallBridge is the assembled callbridge process.
type CallBridge struct {
	*callbridge.Server
	// HTTPAddr is the address /healthz, /readyz and /metrics are served on
	// (HTTP_ADDR, its port resolved).
	HTTPAddr string
	infra    *infra
	closers  closers
}

// Ping checks the callbridge's connections, for /readyz.
func (c *CallBridge) Ping(ctx context.Context) error { return c.infra.ping(ctx) }

// Close releases the callbridge's connections.
func (c *CallBridge) Close() { c.closers.close() }

// NewCallBridge connects, builds the media engine and the calling domain,
// and starts the operator listener. Without ffmpeg the calls still work and
// are not recorded (said once here).
func NewCallBridge(ctx context.Context, c config.CallBridge, log *slog.Logger) (_ *CallBridge, err error) {
	cb := &CallBridge{}
	defer func() {
		if err != nil {
			cb.Close()
		}
	}()
	in, err := connect(ctx, c.Common, log, &cb.closers)
	if err != nil {
		return nil, err
	}
	cb.infra = in
	box, err := secrets.New(c.EncryptionKey)
	if err != nil {
		return nil, fmt.Errorf("ENCRYPTION_KEY: %w", err)
	}
	store, err := newStore(c.Storage, nil, "")
	if err != nil {
		return nil, err
	}
	engine, err := media.NewEngine(media.Config{PublicIP: c.PublicIP, PortMin: c.UDPPortMin, PortMax: c.UDPPortMax,
		GatherTimeout: c.GatherTimeout})
	if err != nil {
		return nil, fmt.Errorf("media engine: %w", err)
	}
	recording := c.RecordingEnabled
	if recording {
		if _, err := exec.LookPath(c.FFmpegPath); err != nil {
			log.Warn("calls will not be recorded: ffmpeg is missing (apt-get install ffmpeg, or set FFMPEG_PATH)", "error", err)
			recording = false
		}
	}
	recDir := c.RecordingDir
	if recDir == "" {
		recDir = os.TempDir()
	}
	if err := os.MkdirAll(recDir, 0o700); err != nil {
		return nil, fmt.Errorf("CALL_RECORDING_DIR: %w", err)
	}
	m := metrics.New()
	m.WatchCalls()
	provider := platform.New(c.PlatformAPIURL, c.PlatformAPIVersion, nil)
	settings := orgsettings.NewService(in.DB, box, store, nil)
	hooks := webhooks.NewService(in.DB, box, in.Enq, safehttp.Policy{AllowPrivate: c.OutboundAllowPrivate}, m, log,
		webhooks.WithListenerCache(in.Redis, principalMaxAge, log))
	accts := accounts.NewService(in.DB, box, provider, settings, in.Enq, log)
	// The callbridge publishes its calls' events (ringing, answered,
	// ended) for the api's event streams.
	pub := live.NewBus(in.Redis, log)
	// identity here only reads users (the agents' names, who may be
	// assigned a call), teams a transferred call's team.
	ids := identity.NewService(in.DB, nil, nil, log)
	calls := calling.NewService(calling.Deps{DB: in.DB, Redis: in.Redis, Accounts: accts, Contacts: contacts.NewService(in.DB, hooks, pub, ids),
		People: ids, Teams: teams.NewService(in.DB, ids),
		Settings: settings, Provider: provider, Live: pub, Log: log, Config: calling.Config{OutgoingWait: c.OutgoingWait}})
	cb.Server = callbridge.New(callbridge.Deps{Calls: calls, Bridge: calling.NewBridge(in.Redis, uuid.NewString()), Engine: engine,
		Provider: provider, Store: store, Audio: settings, Metrics: m, Log: log,
		Config: callbridge.Config{RecordingEnabled: recording, RecordingDir: recDir, FFmpegPath: c.FFmpegPath,
			MaxRequests: c.MaxRequests}})
	addr, stop, err := ServeOps(c.HTTPAddr, log, cb.Ping, m, c.Pprof)
	if err != nil {
		return nil, fmt.Errorf("HTTP_ADDR: %w", err)
	}
	cb.HTTPAddr = addr
	cb.closers.add(stop)
	return cb, nil
}
