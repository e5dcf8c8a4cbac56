package media

import (
	"bytes"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/pion/ice/v4"
	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// testPeer is a real pion peer on loopback standing for the provider's side of
// the platform leg or an agent's browser. It sends tagged Opus packets and
// keeps everything it receives.
type testPeer struct {
	tb    testing.TB
	pc    *webrtc.PeerConnection
	track *webrtc.TrackLocalStaticRTP

	mu   sync.Mutex
	got  []rxPacket
	conn chan struct{}
	once sync.Once
	keep bool // keep received payloads (off in benchmarks)
	n    int  // packets received
	// onPacket, when set (before connecting), sees each received packet.
	onPacket func(p *rtp.Packet, at time.Time)
}

type rxPacket struct {
	seq     uint16
	ts      uint32
	payload []byte
	at      time.Time
}

var testAPI = func() *webrtc.API {
	m := &webrtc.MediaEngine{}
	if err := m.RegisterCodec(opusCodec, webrtc.RTPCodecTypeAudio); err != nil {
		panic(err)
	}
	s := webrtc.SettingEngine{}
	s.SetIncludeLoopbackCandidate(true)
	s.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	s.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeUDP4})
	return webrtc.NewAPI(webrtc.WithMediaEngine(m), webrtc.WithSettingEngine(s))
}()

func newTestPeer(tb testing.TB) *testPeer {
	tb.Helper()
	pc, err := testAPI.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		tb.Fatal(err)
	}
	tr, err := webrtc.NewTrackLocalStaticRTP(opusCodec.RTPCodecCapability, "audio", "peer")
	if err != nil {
		tb.Fatal(err)
	}
	p := &testPeer{tb: tb, pc: pc, track: tr, conn: make(chan struct{}), keep: true}
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateConnected {
			p.once.Do(func() { close(p.conn) })
		}
	})
	pc.OnTrack(func(t *webrtc.TrackRemote, _ *webrtc.RTPReceiver) {
		buf := make([]byte, 1500)
		for {
			n, _, err := t.Read(buf)
			if err != nil {
				return
			}
			at := time.Now()
			var pkt rtp.Packet
			if pkt.Unmarshal(buf[:n]) != nil {
				continue
			}
			if p.onPacket != nil {
				p.onPacket(&pkt, at)
			}
			p.mu.Lock()
			p.n++
			if p.keep {
				p.got = append(p.got, rxPacket{pkt.SequenceNumber, pkt.Timestamp, bytes.Clone(pkt.Payload), at})
			}
			p.mu.Unlock()
		}
	})
	tb.Cleanup(func() { _ = pc.Close() })
	return p
}

// offer adds the sendrecv audio track and returns a complete offer.
func (p *testPeer) offer() string {
	p.tb.Helper()
	if _, err := p.pc.AddTransceiverFromTrack(p.track,
		webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionSendrecv}); err != nil {
		p.tb.Fatal(err)
	}
	o, err := p.pc.CreateOffer(nil)
	if err != nil {
		p.tb.Fatal(err)
	}
	return p.setLocal(o)
}

func (p *testPeer) setLocal(d webrtc.SessionDescription) string {
	done := webrtc.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(d); err != nil {
		p.tb.Fatal(err)
	}
	<-done
	return p.pc.LocalDescription().SDP
}

func (p *testPeer) setAnswer(sdp string) {
	p.tb.Helper()
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: sdp}); err != nil {
		p.tb.Fatal(err)
	}
}

// answer answers an offer of ours (an outgoing call's callee).
func (p *testPeer) answer(offer string) string {
	p.tb.Helper()
	if err := p.pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeOffer, SDP: offer}); err != nil {
		p.tb.Fatal(err)
	}
	if _, err := p.pc.AddTrack(p.track); err != nil {
		p.tb.Fatal(err)
	}
	a, err := p.pc.CreateAnswer(nil)
	if err != nil {
		p.tb.Fatal(err)
	}
	return p.setLocal(a)
}

func (p *testPeer) waitConnected() {
	p.tb.Helper()
	select {
	case <-p.conn:
	case <-time.After(10 * time.Second):
		p.tb.Fatal("peer did not connect within 10 s")
	}
}

// tagged is a test payload that ffmpeg can decode: TOC 0xF8 (CELT fullband,
// 20 ms, mono, one frame), a 4-byte tag, a counter, and filler to 60 bytes.
func tagged(tag string, i uint32) []byte {
	b := make([]byte, 60)
	b[0] = 0xF8
	copy(b[1:5], tag)
	binary.BigEndian.PutUint32(b[5:9], i)
	for j := 9; j < len(b); j++ {
		b[j] = byte(int(i)*7 + j*13)
	}
	return b
}

// parseTag returns a tagged payload's tag and counter ("" if not tagged).
func parseTag(b []byte) (string, uint32) {
	if len(b) != 60 || b[0] != 0xF8 {
		return "", 0
	}
	i := binary.BigEndian.Uint32(b[5:9])
	if !bytes.Equal(b, tagged(string(b[1:5]), i)) {
		return "", 0
	}
	return string(b[1:5]), i
}

// sendFor sends tagged packets every 20 ms for d, and returns how many.
func (p *testPeer) sendFor(tag string, d time.Duration) int {
	stop := p.startSending(tag)
	time.Sleep(d)
	return stop()
}

// startSending sends tagged packets every 20 ms until the returned function is
// called, which returns the number sent.
func (p *testPeer) startSending(tag string) func() int {
	quit, done := make(chan struct{}), make(chan int)
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		seq, ts := uint16(1000), uint32(5000)
		var i uint32
		for {
			pkt := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111, SequenceNumber: seq, Timestamp: ts},
				Payload: tagged(tag, i)}
			_ = p.track.WriteRTP(&pkt)
			seq++
			ts += 960
			i++
			select {
			case <-quit:
				done <- int(i)
				return
			case <-t.C:
			}
		}
	}()
	return func() int { close(quit); return <-done }
}

func (p *testPeer) received() []rxPacket {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]rxPacket(nil), p.got...)
}

func (p *testPeer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// tags counts received tagged payloads by tag; untagged ones count under "".
func tags(pkts []rxPacket) map[string]int {
	m := map[string]int{}
	for _, p := range pkts {
		tag, _ := parseTag(p.payload)
		m[tag]++
	}
	return m
}
