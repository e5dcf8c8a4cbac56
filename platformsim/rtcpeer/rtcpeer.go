// Package rtcpeer is a small pion/webrtc audio peer for tests: the
// simulator uses it as the customer's phone, end-to-end tests as the agent's
// browser. It negotiates one sendrecv Opus audio stream on loopback,
// sends recognisable packets and records every packet it receives, so that a
// test can prove that audio crossed a bridge byte for byte and in which
// direction.
//
// Payloads look like Opus to anything that inspects them (a CELT fullband
// 20 ms TOC byte) but carry a tag and a counter (see Tagged), because tests
// need to know whose audio arrived, not how it sounds.
package rtcpeer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// Opus as the provider negotiates it: 48 kHz, two channels in SDP, PT 111.
const (
	OpusPayloadType = 111
	opusClockRate   = 48000
	// frameSamples is 20 ms at 48 kHz: the RTP timestamp step per packet.
	frameSamples = opusClockRate / 50
	// FrameInterval is how often StartSending sends a packet.
	FrameInterval = 20 * time.Millisecond
)

// gatherTimeout bounds ICE gathering when the caller's context has no
// earlier deadline: host candidates on loopback take milliseconds, so a
// long wait means something is wrong and the SDP so far is used.
const gatherTimeout = 5 * time.Second

// Packet is one received RTP packet.
type Packet struct {
	Payload        []byte
	SequenceNumber uint16
	Timestamp      uint32
	SSRC           uint32
	At             time.Time
}

// Peer is one end of an audio call. Its methods are safe for concurrent
// use.
type Peer struct {
	name  string
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticRTP

	connected     chan struct{} // closed on the first Connected state
	ended         chan struct{} // closed on Failed or Closed
	connectedOnce sync.Once
	endedOnce     sync.Once

	// negMu serialises signalling so that SetAnswer can tell a repeated
	// answer from a conflicting one.
	negMu     sync.Mutex
	answerSDP string

	sendMu   sync.Mutex // guards stopSend and sendDone
	stopSend chan struct{}
	sendDone chan struct{}

	mu       sync.Mutex
	sent     [][]byte
	received []Packet
	seq      uint16
	ts       uint32

	closeOnce sync.Once
	closeErr  error
}

// New creates a peer with one sendrecv audio transceiver. Loopback
// candidates are included and mDNS is off so that two peers on one machine
// (or a peer and the call bridge) connect without a network.
func New(name string) (*Peer, error) {
	var se webrtc.SettingEngine
	se.SetIncludeLoopbackCandidate(true)
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)

	var me webrtc.MediaEngine
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{
		RTPCodecCapability: webrtc.RTPCodecCapability{
			MimeType: webrtc.MimeTypeOpus, ClockRate: opusClockRate, Channels: 2,
			SDPFmtpLine: "minptime=10;useinbandfec=1",
		},
		PayloadType: OpusPayloadType,
	}, webrtc.RTPCodecTypeAudio); err != nil {
		return nil, fmt.Errorf("rtcpeer: register opus: %w", err)
	}
	api := webrtc.NewAPI(webrtc.WithSettingEngine(se), webrtc.WithMediaEngine(&me))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		return nil, fmt.Errorf("rtcpeer: new peer connection: %w", err)
	}
	track, err := webrtc.NewTrackLocalStaticRTP(
		webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeOpus, ClockRate: opusClockRate, Channels: 2},
		"audio", name)
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("rtcpeer: new track: %w", err)
	}
	p := &Peer{
		name: name, pc: pc, track: track,
		connected: make(chan struct{}), ended: make(chan struct{}),
		seq: 1, ts: 1,
	}
	tr, err := pc.AddTransceiverFromTrack(track, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv})
	if err != nil {
		_ = pc.Close()
		return nil, fmt.Errorf("rtcpeer: add transceiver: %w", err)
	}
	// RTCP must be read for the sender's buffers to drain; there are no
	// interceptors that would act on it.
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := tr.Sender().Read(buf); err != nil {
				return
			}
		}
	}()
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		for {
			pkt, _, err := t.ReadRTP()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.received = append(p.received, Packet{
				// A copy, because pkt.Payload pins a whole MTU-sized
				// read buffer.
				Payload: append([]byte(nil), pkt.Payload...), SequenceNumber: pkt.SequenceNumber,
				Timestamp: pkt.Timestamp, SSRC: pkt.SSRC, At: time.Now(),
			})
			p.mu.Unlock()
		}
	})
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		switch s {
		case webrtc.PeerConnectionStateConnected:
			p.connectedOnce.Do(func() { close(p.connected) })
		case webrtc.PeerConnectionStateFailed, webrtc.PeerConnectionStateClosed:
			p.endedOnce.Do(func() { close(p.ended) })
		}
	})
	return p, nil
}

// Name is the name given to New.
func (p *Peer) Name() string { return p.name }

// Offer creates the offer and returns it with every candidate in it (no
// trickle: the provider's signalling carries one SDP).
func (p *Peer) Offer(ctx context.Context) (string, error) {
	p.negMu.Lock()
	defer p.negMu.Unlock()
	offer, err := p.pc.CreateOffer(nil)
	if err != nil {
		return "", fmt.Errorf("rtcpeer: create offer: %w", err)
	}
	return p.setLocal(ctx, offer)
}

// Answer applies a remote offer and returns the complete answer.
func (p *Peer) Answer(ctx context.Context, offer string) (string, error) {
	p.negMu.Lock()
	defer p.negMu.Unlock()
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		return "", fmt.Errorf("rtcpeer: set offer: %w", err)
	}
	answer, err := p.pc.CreateAnswer(nil)
	if err != nil {
		return "", fmt.Errorf("rtcpeer: create answer: %w", err)
	}
	return p.setLocal(ctx, answer)
}

func (p *Peer) setLocal(ctx context.Context, desc webrtc.SessionDescription) (string, error) {
	gathered := webrtc.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(desc); err != nil {
		return "", fmt.Errorf("rtcpeer: set local %s: %w", desc.Type, err)
	}
	ctx, cancel := context.WithTimeout(ctx, gatherTimeout)
	defer cancel()
	select {
	case <-gathered:
	case <-ctx.Done():
		if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
			return "", fmt.Errorf("rtcpeer: gathering: %w", err)
		}
		// Out of time: what was gathered so far may still be enough.
	}
	return p.pc.LocalDescription().SDP, nil
}

// ErrAnswerConflict is returned by SetAnswer when a different answer was
// applied before.
var ErrAnswerConflict = errors.New("rtcpeer: a different answer was applied already")

// SetAnswer applies the remote answer to our offer. Applying the same answer
// again is a no-op (the provider's pre_accept and accept carry the same
// SDP); a different one is ErrAnswerConflict.
func (p *Peer) SetAnswer(answer string) error {
	p.negMu.Lock()
	defer p.negMu.Unlock()
	if p.answerSDP != "" {
		if p.answerSDP == answer {
			return nil
		}
		return ErrAnswerConflict
	}
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: answer}); err != nil {
		return fmt.Errorf("rtcpeer: set answer: %w", err)
	}
	p.answerSDP = answer
	return nil
}

// ErrEnded is returned by Connected when the connection failed or was
// closed before it connected.
var ErrEnded = errors.New("rtcpeer: peer connection failed or closed")

// Connected waits until the peer connection is connected (ICE and DTLS
// done).
func (p *Peer) Connected(ctx context.Context) error {
	select {
	case <-p.connected:
		return nil
	case <-p.ended:
		return ErrEnded
	case <-ctx.Done():
		return fmt.Errorf("rtcpeer: %s waiting for connection: %w", p.name, ctx.Err())
	}
}

// Done is closed once the connection has failed or the peer was closed.
func (p *Peer) Done() <-chan struct{} { return p.ended }

// IsConnected reports whether the peer has connected at some point.
func (p *Peer) IsConnected() bool {
	select {
	case <-p.connected:
		return true
	default:
		return false
	}
}

// StartSending sends a tagged packet every 20 ms, from the moment the peer
// is connected (packets written earlier would be dropped by pion and could
// not be told from lost ones) until StopSending or Close. Calling it again
// restarts the loop with the new tag; counters keep counting, so a payload's
// counter is always its index in Sent().
func (p *Peer) StartSending(tag string) {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.stopLocked()
	p.stopSend, p.sendDone = make(chan struct{}), make(chan struct{})
	go p.sendLoop(tag, p.stopSend, p.sendDone)
}

func (p *Peer) sendLoop(tag string, stop, done chan struct{}) {
	defer close(done)
	select {
	case <-p.connected:
	case <-p.ended:
		return
	case <-stop:
		return
	}
	tick := time.NewTicker(FrameInterval)
	defer tick.Stop()
	for {
		if !p.sendOne(tag) {
			return
		}
		select {
		case <-tick.C:
		case <-stop:
			return
		case <-p.ended:
			return
		}
	}
}

// sendOne writes the next packet; false once the track can take no more.
func (p *Peer) sendOne(tag string) bool {
	p.mu.Lock()
	payload := Payload(tag, uint32(len(p.sent)))
	pkt := &rtp.Packet{
		Header: rtp.Header{Version: 2, PayloadType: OpusPayloadType,
			SequenceNumber: p.seq, Timestamp: p.ts},
		Payload: payload,
	}
	p.mu.Unlock()
	if err := p.track.WriteRTP(pkt); err != nil {
		return false
	}
	p.mu.Lock()
	p.sent = append(p.sent, payload)
	p.seq++
	p.ts += frameSamples
	p.mu.Unlock()
	return true
}

// StopSending stops the loop StartSending started and waits for it.
func (p *Peer) StopSending() {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	p.stopLocked()
}

func (p *Peer) stopLocked() {
	if p.stopSend != nil {
		close(p.stopSend)
		<-p.sendDone
		p.stopSend, p.sendDone = nil, nil
	}
}

// Sent returns every payload sent so far, in order.
func (p *Peer) Sent() [][]byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]byte(nil), p.sent...)
}

// Received returns every RTP packet received so far, in arrival order.
func (p *Peer) Received() []Packet {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Packet(nil), p.received...)
}

// ReceivedFrom counts the received packets whose payload carries tag.
func (p *Peer) ReceivedFrom(tag string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pkt := range p.received {
		if t, _, ok := Tagged(pkt.Payload); ok && t == tag {
			n++
		}
	}
	return n
}

// Close stops sending and closes the peer connection. It is idempotent.
func (p *Peer) Close() error {
	p.closeOnce.Do(func() {
		p.StopSending()
		p.closeErr = p.pc.Close()
		p.endedOnce.Do(func() { close(p.ended) })
	})
	return p.closeErr
}

// Payload layout: the TOC byte, a marker, the tag's length, the tag, the
// counter, then filler up to payloadSize. The marker and length make a tag
// recoverable without knowing it, and keep real Opus packets (which often
// start with 0xF8 too) from passing for ours.
const (
	opusTOC     = 0xF8 // config 31 (CELT fullband 20 ms), mono, one frame
	tagMarker   = 'W'
	maxTagLen   = 40
	payloadSize = 60
	filler      = 0xA5
)

// Payload builds the payload StartSending sends as packet number counter.
// Tags longer than 40 bytes are cut to 40.
func Payload(tag string, counter uint32) []byte {
	if len(tag) > maxTagLen {
		tag = tag[:maxTagLen]
	}
	b := make([]byte, 0, max(payloadSize, 3+len(tag)+4))
	b = append(b, opusTOC, tagMarker, byte(len(tag)))
	b = append(b, tag...)
	b = binary.BigEndian.AppendUint32(b, counter)
	for len(b) < payloadSize {
		b = append(b, filler)
	}
	return b
}

// Tagged reads the tag and counter out of a payload built by Payload; ok is
// false for anything else.
func Tagged(payload []byte) (tag string, counter uint32, ok bool) {
	if len(payload) < 3 || payload[0] != opusTOC || payload[1] != tagMarker {
		return "", 0, false
	}
	n := int(payload[2])
	if n > maxTagLen || len(payload) < 3+n+4 {
		return "", 0, false
	}
	return string(payload[3 : 3+n]), binary.BigEndian.Uint32(payload[3+n:]), true
}
