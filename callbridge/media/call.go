package media

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/webrtc/v4"
)

// legKind names a call's two legs; it indexes the per-leg arrays of Call.
type legKind int

const (
	legPlatform legKind = iota // the customer, through the provider
	legAgent                   // the agent's browser
)

func (k legKind) String() string {
	if k == legPlatform {
		return "platform"
	}
	return "agent"
}

func (k legKind) other() legKind { return 1 - k }

// mode is what flows; read lock-free by the relay loops on every packet.
type mode int32

const (
	modeIdle   mode = iota // nothing yet
	modePlay               // a clip to the platform, nothing forwarded
	modeBridge             // both ways
	modeHold               // music to the platform, nothing forwarded
	modeClosed
)

func (m mode) String() string {
	return [...]string{"idle", "play", "bridge", "hold", "closed"}[m]
}

// CallOptions configure one call.
type CallOptions struct {
	// RecordDir, when not "", receives the two legs' received Opus as OGG files
	// (platform.ogg, agent.ogg) for the talk period; it is created if needed.
	RecordDir string
	// OnPlatformGone is called once, in its own goroutine, when the platform
	// leg's connection fails or is closed by the peer (the caller vanished). It
	// is not called for a Close of ours.
	OnPlatformGone func()
}

// Call is one call's two legs and what flows between them. Control methods are
// serialized (a mutex); the relay loops read the mode lock-free.
type Call struct {
	e    *Engine
	opts CallOptions

	mu        sync.Mutex
	pcs       [2]*webrtc.PeerConnection
	player    *player
	talkStart time.Time
	closed    bool
	result    Recording

	mode    atomic.Int32
	closing atomic.Bool
	out     [2]*outStream  // out[k]: the track sent to leg k
	live    [2]atomic.Bool // live[k]: leg k is set up (else nothing is forwarded to it)
	rec     [2]atomic.Pointer[recorder]
	stats   [2]legStats // stats[k]: packets received from leg k
	played  atomic.Uint64
	delay   *delayHist
	gone    sync.Once
}

type legStats struct {
	received  atomic.Uint64
	forwarded atomic.Uint64
}

// Recording is what a call recorded: one OGG/Opus file per leg ("" when not
// recording or nothing was bridged) and the talk time, from the first Bridge to
// Close, which is also each file's duration.
type Recording struct {
	PlatformFile, AgentFile string
	Talk                    time.Duration
}

// NewCall prepares a call; legs are added with AnswerPlatform/OfferPlatform and
// AnswerAgent.
func (e *Engine) NewCall(opts CallOptions) *Call {
	c := &Call{e: e, opts: opts, delay: newDelayHist()}
	for k := range c.out {
		o, err := newOutStream(legKind(k).String())
		if err != nil { // only fails for an invalid codec, which is a constant
			panic(err)
		}
		c.out[k] = o
	}
	return c
}

var errClosed = errors.New("media: call closed")

// AnswerPlatform answers the platform's offer (an incoming call) with a
// complete SDP. A malformed offer, or one without audio, is an ErrBadSDP.
func (c *Call) AnswerPlatform(ctx context.Context, offer string) (string, error) {
	return c.answer(ctx, legPlatform, offer)
}

// AnswerAgent answers the agent browser's offer, closing a previous agent leg
// first (a transfer, or a reconnecting browser).
func (c *Call) AnswerAgent(ctx context.Context, offer string) (string, error) {
	return c.answer(ctx, legAgent, offer)
}

func (c *Call) answer(ctx context.Context, k legKind, offer string) (string, error) {
	if err := checkSDP(offer); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", errClosed
	}
	if c.pcs[k] != nil {
		if k == legPlatform {
			return "", errors.New("media: platform leg already set up")
		}
		c.closeLegLocked(k)
	}
	pc, err := c.newLeg(k)
	if err != nil {
		return "", err
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		_ = pc.Close()
		return "", fmt.Errorf("%w: %v", ErrBadSDP, err)
	}
	if _, err := pc.AddTrack(c.out[k].track); err != nil {
		_ = pc.Close()
		return "", fmt.Errorf("media: add track: %w", err)
	}
	c.drainRTCP(pc)
	ans, err := pc.CreateAnswer(nil)
	if err != nil {
		_ = pc.Close()
		return "", fmt.Errorf("%w: cannot answer: %v", ErrBadSDP, err)
	}
	sdp, err := c.e.gather(ctx, pc, ans)
	if err != nil {
		_ = pc.Close()
		return "", err
	}
	c.pcs[k] = pc
	c.live[k].Store(true)
	return sdp, nil
}

// OfferPlatform makes our offer for an outgoing call; the callee's answer comes
// later through SetPlatformAnswer.
func (c *Call) OfferPlatform(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return "", errClosed
	}
	if c.pcs[legPlatform] != nil {
		return "", errors.New("media: platform leg already set up")
	}
	pc, err := c.newLeg(legPlatform)
	if err != nil {
		return "", err
	}
	if _, err := pc.AddTransceiverFromTrack(c.out[legPlatform].track,
		webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv}); err != nil {
		_ = pc.Close()
		return "", fmt.Errorf("media: add transceiver: %w", err)
	}
	c.drainRTCP(pc)
	off, err := pc.CreateOffer(nil)
	if err != nil {
		_ = pc.Close()
		return "", fmt.Errorf("media: create offer: %w", err)
	}
	sdp, err := c.e.gather(ctx, pc, off)
	if err != nil {
		_ = pc.Close()
		return "", err
	}
	c.pcs[legPlatform] = pc
	c.live[legPlatform].Store(true)
	return sdp, nil
}

// SetPlatformAnswer applies the callee's answer to our OfferPlatform offer.
func (c *Call) SetPlatformAnswer(answer string) error {
	if err := checkSDP(answer); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	pc := c.pcs[legPlatform]
	if pc == nil || pc.SignalingState() != webrtc.SignalingStateHaveLocalOffer {
		return errors.New("media: no platform offer awaiting an answer")
	}
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSDP, err)
	}
	return nil
}

// newLeg creates a leg's peer connection with its handlers.
func (c *Call) newLeg(k legKind) (*webrtc.PeerConnection, error) {
	pc, err := c.e.newPeerConnection()
	if err != nil {
		return nil, fmt.Errorf("media: new peer connection: %w", err)
	}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		if tr.Kind() == webrtc.RTPCodecTypeAudio {
			c.readLoop(k, tr) // pion runs OnTrack in its own goroutine
		}
	})
	if k == legPlatform {
		pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
			if s != webrtc.PeerConnectionStateFailed && s != webrtc.PeerConnectionStateClosed {
				return
			}
			if c.closing.Load() || c.opts.OnPlatformGone == nil {
				return
			}
			c.gone.Do(func() { go c.opts.OnPlatformGone() })
		})
	}
	return pc, nil
}

// drainRTCP reads the RTCP arriving for our senders: the report interceptor
// processes it as it is read, and unread it would only fill buffers.
func (c *Call) drainRTCP(pc *webrtc.PeerConnection) {
	for _, s := range pc.GetSenders() {
		go func() {
			buf := make([]byte, 1500)
			for {
				if _, _, err := s.Read(buf); err != nil {
					return
				}
			}
		}()
	}
}

func (c *Call) closeLegLocked(k legKind) {
	if pc := c.pcs[k]; pc != nil {
		c.pcs[k] = nil
		c.live[k].Store(false)
		if err := pc.Close(); err != nil {
			slog.Debug("media: closing leg", "leg", k.String(), "err", err)
		}
	}
}

// DropAgent closes the agent leg (transfer); what flows is unchanged, so the
// platform hears nothing until Play or a new agent is bridged.
func (c *Call) DropAgent() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLegLocked(legAgent)
}

// Play loops a to the platform leg (ringback, waiting); nothing is forwarded
// either way. A nil a plays nothing.
func (c *Call) Play(a *Audio) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.switchLocked(modePlay, a)
}

// Hold plays music to the platform leg; the agent leg stays connected but
// nothing is forwarded either way. A nil music is BuiltinHold.
func (c *Call) Hold(music *Audio) {
	if music == nil {
		music = BuiltinHold()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.switchLocked(modeHold, music)
}

// Bridge relays both ways, platform to agent and agent to platform. The first
// Bridge starts the talk period (and the recording).
func (c *Call) Bridge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if c.talkStart.IsZero() {
		c.talkStart = time.Now()
		c.startRecordingLocked()
	}
	c.switchLocked(modeBridge, nil)
}

// switchLocked changes what flows. The old player is stopped before the new
// mode starts so that two sources never alternate on the platform track.
func (c *Call) switchLocked(m mode, a *Audio) {
	if c.closed {
		return
	}
	if c.player != nil {
		c.player.halt()
		c.player = nil
	}
	c.mode.Store(int32(m))
	if a != nil && len(a.frames) > 0 {
		c.player = startPlayer(a, c.out[legPlatform], func() { c.played.Add(1) })
	}
}

func (c *Call) startRecordingLocked() {
	if c.opts.RecordDir == "" {
		return
	}
	if err := os.MkdirAll(c.opts.RecordDir, 0o750); err != nil {
		slog.Error("media: recording disabled for this call", "dir", c.opts.RecordDir, "err", err)
		return
	}
	for k := range c.rec {
		path := filepath.Join(c.opts.RecordDir, legKind(k).String()+".ogg")
		r, err := newRecorder(path, c.talkStart)
		if err != nil {
			slog.Error("media: recording a leg", "path", path, "err", err)
			continue
		}
		c.rec[k].Store(r)
	}
}

// record is called by the relay loops during the talk period.
func (c *Call) record(from legKind, payload []byte, now time.Time) {
	if r := c.rec[from].Load(); r != nil {
		r.write(payload, now)
	}
}

// Stats is a snapshot of a call's counters.
type Stats struct {
	Mode             string // idle, play, bridge, hold, closed
	PlatformReceived uint64 // packets received from the platform leg
	AgentReceived    uint64 // packets received from the agent leg(s)
	PlatformToAgent  uint64 // packets forwarded platform → agent
	AgentToPlatform  uint64 // packets forwarded agent → platform
	Played           uint64 // clip frames sent to the platform
	SentToPlatform   uint64 // packets written on the platform's track (forwarded + played)
	SentToAgent      uint64
	Dropped          uint64         // late/duplicate packets not forwarded, and write errors
	ForwardDelay     DelayHistogram // ReadRTP on one leg to WriteRTP on the other, both ways
}

// Stats returns the call's counters.
func (c *Call) Stats() Stats {
	return Stats{
		Mode:             mode(c.mode.Load()).String(),
		PlatformReceived: c.stats[legPlatform].received.Load(),
		AgentReceived:    c.stats[legAgent].received.Load(),
		PlatformToAgent:  c.stats[legPlatform].forwarded.Load(),
		AgentToPlatform:  c.stats[legAgent].forwarded.Load(),
		Played:           c.played.Load(),
		SentToPlatform:   c.out[legPlatform].sent.Load(),
		SentToAgent:      c.out[legAgent].sent.Load(),
		Dropped:          c.out[legPlatform].dropped.Load() + c.out[legAgent].dropped.Load(),
		ForwardDelay:     c.delay.snapshot(),
	}
}

// Close closes both legs, stops the player and finishes the recording files.
// It is idempotent: later calls return the same Recording.
func (c *Call) Close() Recording {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.result
	}
	end := time.Now()
	c.closing.Store(true)
	if c.player != nil {
		c.player.halt()
		c.player = nil
	}
	c.mode.Store(int32(modeClosed))
	c.closed = true
	c.closeLegLocked(legAgent)
	c.closeLegLocked(legPlatform)

	if !c.talkStart.IsZero() {
		c.result.Talk = end.Sub(c.talkStart)
	}
	for k := range c.rec {
		r := c.rec[k].Load()
		if r == nil {
			continue
		}
		if err := r.close(end); err != nil {
			slog.Error("media: finishing a recording", "path", r.path, "err", err)
		}
		if legKind(k) == legPlatform {
			c.result.PlatformFile = r.path
		} else {
			c.result.AgentFile = r.path
		}
	}
	return c.result
}
