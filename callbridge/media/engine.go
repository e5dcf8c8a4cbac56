// Package media is the media core of the callbridge process: it owns the
// pion/webrtc peer connections of a call's two legs (the platform leg, the
// customer through the messaging provider, and the agent leg, the agent's
// browser) and moves RTP between them. It knows nothing of the database, HTTP
// or Redis; the session logic drives it through Call.
//
// Relay, not transcode. Both legs speak Opus at 48 kHz (the only codec
// registered), so the bridge forwards each RTP payload from one leg to the
// other unchanged, byte for byte. Decoding and re-encoding would cost a codec
// per leg per call (tens of times the CPU of a copy), add a frame of latency
// and degrade the audio; it would only be needed for mixing, which a two-party
// call does not do. Recording, which needs a mix, is done after the call with
// ffmpeg from the received packets written to OGG files (see Mix).
//
// Sequence numbers and timestamps are rewritten. What the platform hears comes
// from several sources over one call: ringback frames played by us, then the
// agent's packets, then hold music, then the agent again (or another agent after
// a transfer). Each source has its own SSRC, sequence and timestamp spaces, but
// the platform leg has one outgoing track, and a receiver's jitter buffer treats
// a jump in sequence numbers as loss and a jump in timestamps as a gap or a
// reset. So each outgoing track (see outStream) renumbers every packet it sends:
// sequence numbers go up by exactly one per packet, and timestamps are mapped by
// a per-source offset chosen when the source changes so that they continue from
// the last packet sent plus the wall time elapsed since (at least one frame).
// Within a source the sender's timestamp deltas are kept (so DTX gaps survive);
// a packet older than one already forwarded from the same source is dropped,
// since renumbering would otherwise present it in the wrong order. SSRC and
// payload type are set by pion's TrackLocalStaticRTP for each binding.
package media

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/sdp/v3"
	"github.com/pion/webrtc/v4"
)

// Config configures an Engine.
type Config struct {
	// PublicIP is a 1:1 NAT address announced beside the host candidates'
	// local addresses (an ICE address rewrite rule in append mode); ""
	// announces the local ones only.
	PublicIP string
	// PortMin, PortMax bound the UDP ports used (0, 0 = any).
	PortMin, PortMax uint16
	// ICEServers are the STUN/TURN servers used to gather candidates.
	ICEServers []webrtc.ICEServer
	// GatherTimeout bounds candidate gathering before an SDP is returned
	// (default 2 s): SDPs are complete, there is no trickle ICE.
	GatherTimeout time.Duration
}

// Engine builds calls that share one pion API (codecs, interceptors, network
// settings). It is safe for concurrent use.
type Engine struct {
	cfg Config
	api *webrtc.API
}

// opusCodec is the one codec of every leg: Opus 48 kHz, payload type 111 (the
// browsers' usual number, so answers need no remapping).
var opusCodec = webrtc.RTPCodecParameters{
	RTPCodecCapability: webrtc.RTPCodecCapability{
		MimeType:    webrtc.MimeTypeOpus,
		ClockRate:   sampleRate,
		Channels:    2,
		SDPFmtpLine: "minptime=10;useinbandfec=1",
	},
	PayloadType: 111,
}

// NewEngine validates cfg and builds the pion API.
func NewEngine(cfg Config) (*Engine, error) {
	if cfg.GatherTimeout <= 0 {
		cfg.GatherTimeout = 2 * time.Second
	}
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(opusCodec, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("media: register opus: %w", err)
	}
	// Only RTCP sender/receiver reports: NACK and congestion control are of
	// little use for 20 ms audio frames and cost per-packet work.
	reg := &interceptor.Registry{}
	if err := webrtc.ConfigureRTCPReports(reg); err != nil {
		return nil, fmt.Errorf("media: rtcp reports: %w", err)
	}

	s := webrtc.SettingEngine{}
	s.SetIncludeLoopbackCandidate(true) // a peer on the same host must connect
	s.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6})
	// A vanished caller is noticed within ~10 s rather than pion's 25 s.
	s.SetICETimeouts(4*time.Second, 10*time.Second, 2*time.Second)
	if cfg.PortMin != 0 || cfg.PortMax != 0 {
		if err := s.SetEphemeralUDPPortRange(cfg.PortMin, cfg.PortMax); err != nil {
			return nil, fmt.Errorf("media: UDP port range %d-%d: %w", cfg.PortMin, cfg.PortMax, err)
		}
	}
	if cfg.PublicIP != "" {
		// Appended, not replacing: the public address of a 1:1 NAT is
		// announced beside the local ones, so that peers on the same host
		// or network (and the tests) still connect directly.
		if err := s.SetICEAddressRewriteRules(webrtc.ICEAddressRewriteRule{External: []string{cfg.PublicIP},
			AsCandidateType: webrtc.ICECandidateTypeHost, Mode: webrtc.ICEAddressRewriteAppend}); err != nil {
			return nil, fmt.Errorf("media: public IP %s: %w", cfg.PublicIP, err)
		}
	}
	api := webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithInterceptorRegistry(reg), webrtc.WithSettingEngine(s))
	return &Engine{cfg: cfg, api: api}, nil
}

func (e *Engine) newPeerConnection() (*webrtc.PeerConnection, error) {
	return e.api.NewPeerConnection(webrtc.Configuration{ICEServers: e.cfg.ICEServers})
}

// ErrBadSDP wraps every error caused by the SDP we were given (malformed,
// without audio, wrong type); the caller maps it to a 400.
var ErrBadSDP = errors.New("media: bad SDP")

// checkSDP parses an SDP from a peer and requires an audio section, before pion
// sees it, so that garbage fails with ErrBadSDP rather than a pion state error.
func checkSDP(raw string) error {
	if strings.TrimSpace(raw) == "" {
		return fmt.Errorf("%w: empty", ErrBadSDP)
	}
	var sd sdp.SessionDescription
	if err := sd.UnmarshalString(raw); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSDP, err)
	}
	for _, md := range sd.MediaDescriptions {
		if md.MediaName.Media == "audio" {
			return nil
		}
	}
	return fmt.Errorf("%w: no audio section", ErrBadSDP)
}

// gather sets local as pc's local description and waits for candidate
// gathering to complete, at most GatherTimeout (or until ctx ends), then returns
// the complete SDP. It fails if the SDP has no candidate, no fingerprint or no
// active audio section: such an SDP cannot connect.
func (e *Engine) gather(ctx context.Context, pc *webrtc.PeerConnection, local webrtc.SessionDescription) (string, error) {
	done := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(local); err != nil {
		return "", fmt.Errorf("media: set local description: %w", err)
	}
	t := time.NewTimer(e.cfg.GatherTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C: // use what was gathered so far
	case <-ctx.Done():
		return "", ctx.Err()
	}
	ld := pc.LocalDescription()
	if ld == nil {
		return "", errors.New("media: no local description")
	}
	if err := completeSDP(ld.SDP); err != nil {
		return "", err
	}
	return ld.SDP, nil
}

// completeSDP checks what every SDP we hand out must have.
func completeSDP(s string) error {
	if !strings.Contains(s, "\nm=audio ") || strings.Contains(s, "\nm=audio 0 ") {
		return errors.New("media: SDP has no active audio section (does the offer carry Opus 48 kHz?)")
	}
	if !strings.Contains(s, "\na=fingerprint:") {
		return errors.New("media: SDP has no DTLS fingerprint")
	}
	if !strings.Contains(s, "\na=candidate:") {
		return errors.New("media: no ICE candidate gathered in time")
	}
	return nil
}
