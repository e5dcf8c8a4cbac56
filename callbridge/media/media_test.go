package media

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/pion/webrtc/v4/pkg/media/oggwriter"
)

func newTestEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := NewEngine(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// connectPlatform answers a new platform peer's offer and waits until both sides connect.
func connectPlatform(t testing.TB, c *Call) *testPeer {
	t.Helper()
	p := newTestPeer(t)
	ans, err := c.AnswerPlatform(context.Background(), p.offer())
	if err != nil {
		t.Fatal(err)
	}
	p.setAnswer(ans)
	p.waitConnected()
	return p
}

func connectAgent(t testing.TB, c *Call) *testPeer {
	t.Helper()
	p := newTestPeer(t)
	ans, err := c.AnswerAgent(context.Background(), p.offer())
	if err != nil {
		t.Fatal(err)
	}
	p.setAnswer(ans)
	p.waitConnected()
	return p
}

// waitFor polls cond until it holds, for up to three times d and at least
// 30 s: the wait claims that cond comes to hold, not how soon (a busy
// machine is slower at everything; apptest.WaitLimit, which this package
// cannot import).
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(max(3*d, 30*time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSDPComplete(t *testing.T) {
	e := newTestEngine(t)
	c := e.NewCall(CallOptions{})
	defer c.Close()
	p := newTestPeer(t)
	ans, err := c.AnswerPlatform(context.Background(), p.offer())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"m=audio ", "a=fingerprint:", "a=candidate:", "opus/48000", "127.0.0.1"} {
		if !strings.Contains(ans, want) {
			t.Errorf("answer lacks %q:\n%s", want, ans)
		}
	}
	if strings.Contains(ans, ".local") {
		t.Errorf("answer has an mDNS candidate:\n%s", ans)
	}

	c2 := e.NewCall(CallOptions{})
	defer c2.Close()
	off, err := c2.OfferPlatform(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"m=audio ", "a=fingerprint:", "a=candidate:", "a=rtpmap:111 opus/48000/2"} {
		if !strings.Contains(off, want) {
			t.Errorf("offer lacks %q:\n%s", want, off)
		}
	}
	if strings.Contains(off, "rtpmap:0 ") || strings.Contains(off, "m=video") {
		t.Errorf("offer carries more than Opus:\n%s", off)
	}
}

func TestPublicIPAnnounced(t *testing.T) {
	e, err := NewEngine(Config{PublicIP: "203.0.113.9", PortMin: 40000, PortMax: 40100})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCall(CallOptions{})
	defer c.Close()
	off, err := c.OfferPlatform(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(off, " 203.0.113.9 ") {
		t.Fatalf("offer does not announce the public IP:\n%s", off)
	}
	if !strings.Contains(off, " 127.0.0.1 ") {
		t.Fatalf("the public IP replaced the local candidates:\n%s", off)
	}
}

func TestMalformedOffer(t *testing.T) {
	e := newTestEngine(t)
	videoOnly := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:96 VP8/90000\r\n"
	for _, offer := range []string{"", "   ", "hello", "v=0\r\nbogus", videoOnly} {
		c := e.NewCall(CallOptions{})
		if _, err := c.AnswerPlatform(context.Background(), offer); !errors.Is(err, ErrBadSDP) {
			t.Errorf("AnswerPlatform(%q) = %v, want ErrBadSDP", offer, err)
		}
		if _, err := c.AnswerAgent(context.Background(), offer); !errors.Is(err, ErrBadSDP) {
			t.Errorf("AnswerAgent(%q) = %v, want ErrBadSDP", offer, err)
		}
		c.Close()
	}
	// A leg was not set up by the failures: a good offer still works.
	c := e.NewCall(CallOptions{})
	defer c.Close()
	connectPlatform(t, c)
}

// checkCrossing asserts that to received at least 80 % of from's n packets
// tagged tag, byte-identical, and nothing it did not expect.
func checkCrossing(t *testing.T, name string, got []rxPacket, tag string, n int, allowed ...string) {
	t.Helper()
	seen := map[uint32]bool{}
	for _, p := range got {
		gt, i := parseTag(p.payload)
		switch {
		case gt == tag:
			seen[i] = true
		case gt == "" && len(p.payload) == 60:
			t.Errorf("%s: received a corrupted payload %x", name, p.payload)
		default:
			ok := false
			for _, a := range allowed {
				ok = ok || a == gt
			}
			if !ok {
				t.Errorf("%s: received a packet tagged %q (want only %q)", name, gt, tag)
				return
			}
		}
	}
	if len(seen) < n*8/10 {
		t.Errorf("%s: received %d of %d packets tagged %q (< 80%%)", name, len(seen), n, tag)
	}
}

func TestBridgeBothWays(t *testing.T) {
	e := newTestEngine(t)
	c := e.NewCall(CallOptions{})
	defer c.Close()
	plat := connectPlatform(t, c)
	agent := connectAgent(t, c)
	c.Bridge()

	stopP := plat.startSending("PLAT")
	nA := agent.sendFor("AGNT", 3*time.Second)
	nP := stopP()
	time.Sleep(200 * time.Millisecond)

	// Byte-identical payloads both ways, no echo of one's own packets.
	checkCrossing(t, "agent", agent.received(), "PLAT", nP)
	checkCrossing(t, "platform", plat.received(), "AGNT", nA)
	st := c.Stats()
	if st.PlatformToAgent == 0 || st.AgentToPlatform == 0 || st.Mode != "bridge" {
		t.Errorf("stats: %+v", st)
	}
	if st.ForwardDelay.Total() != st.PlatformToAgent+st.AgentToPlatform {
		t.Errorf("delay histogram counts %d, forwarded %d", st.ForwardDelay.Total(), st.PlatformToAgent+st.AgentToPlatform)
	}
	t.Logf("forward delay p50 %v p99 %v; stats %+v", st.ForwardDelay.Quantile(.5), st.ForwardDelay.Quantile(.99), st)
}

func TestTwoCallsNoCrossTalk(t *testing.T) {
	e := newTestEngine(t)
	var calls [2]*Call
	var plat, agent [2]*testPeer
	for i := range calls {
		calls[i] = e.NewCall(CallOptions{})
		defer calls[i].Close()
		plat[i] = connectPlatform(t, calls[i])
		agent[i] = connectAgent(t, calls[i])
		calls[i].Bridge()
	}
	var stops []func() int
	for i := range calls {
		stops = append(stops, plat[i].startSending("PLT"+string(rune('0'+i))), agent[i].startSending("AGT"+string(rune('0'+i))))
	}
	time.Sleep(3 * time.Second)
	var n []int
	for _, s := range stops {
		n = append(n, s())
	}
	time.Sleep(200 * time.Millisecond)
	for i := range calls {
		checkCrossing(t, "agent"+string(rune('0'+i)), agent[i].received(), "PLT"+string(rune('0'+i)), n[2*i])
		checkCrossing(t, "platform"+string(rune('0'+i)), plat[i].received(), "AGT"+string(rune('0'+i)), n[2*i+1])
	}
}

// checkContinuous asserts one sequence-number and timestamp space: +1 per
// packet, timestamps strictly increasing, advancing roughly with wall time.
func checkContinuous(t *testing.T, got []rxPacket) {
	t.Helper()
	if len(got) < 2 {
		t.Fatalf("only %d packets", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i].seq != got[i-1].seq+1 {
			t.Errorf("packet %d: seq %d after %d", i, got[i].seq, got[i-1].seq)
		}
		if d := int32(got[i].ts - got[i-1].ts); d <= 0 {
			t.Errorf("packet %d: timestamp %d after %d (delta %d)", i, got[i].ts, got[i-1].ts, d)
		}
	}
	first, last := got[0], got[len(got)-1]
	media := float64(last.ts-first.ts) / sampleRate
	wall := last.at.Sub(first.at).Seconds()
	// A quarter of slack: on a loaded machine (make test on two CPUs, the
	// race detector on) the senders' goroutines run late and the last
	// packets arrive bunched (2.09 s of media over 2.56 s of wall time was
	// seen); a clock that froze or ran twice as fast is still far outside.
	if math.Abs(media-wall) > 0.25*wall+0.2 {
		t.Errorf("timestamps advanced %.2f s over %.2f s of wall time", media, wall)
	}
}

func TestRingbackThenBridgeContinuity(t *testing.T) {
	e := newTestEngine(t)
	c := e.NewCall(CallOptions{})
	defer c.Close()
	plat := connectPlatform(t, c)
	ring := BuiltinRingback()
	c.Play(ring)
	agent := connectAgent(t, c)
	stopA := agent.startSending("AGNT")
	time.Sleep(time.Second)
	c.Bridge()
	time.Sleep(time.Second)
	c.Play(ring) // a transfer: ringback again
	time.Sleep(500 * time.Millisecond)
	c.Bridge()
	time.Sleep(time.Second)
	stopA()
	time.Sleep(100 * time.Millisecond)

	got := plat.received()
	checkContinuous(t, got)
	// Ringback frames (in clip order), then agent packets, ringback again from
	// the clip's start, agent again. The first frames played may precede the
	// platform leg's SRTP being ready on the peer, so the first one seen may be
	// a little into the clip.
	var ringN, agentN int
	next := -1 // the ringback frame expected next
	for k := 0; k < 25 && next < 0; k++ {
		if bytes.Equal(got[0].payload, ring.Frame(k)) {
			next = k
		}
	}
	if next < 0 {
		t.Fatalf("the platform's first packet is not an early ringback frame: %x", got[0].payload[:12])
	}
	phase := 0 // 0 ringback, 1 agent, 2 ringback, 3 agent
	for i, p := range got {
		tag, _ := parseTag(p.payload)
		switch {
		case tag == "AGNT":
			agentN++
			if phase%2 == 0 {
				phase++
			}
		case phase%2 == 1 && bytes.Equal(p.payload, ring.Frame(0)):
			phase++ // a new Play starts the clip over
			ringN++
			next = 1
		case phase%2 == 0 && bytes.Equal(p.payload, ring.Frame(next)):
			ringN++
			next = (next + 1) % ring.Frames()
		default:
			t.Fatalf("packet %d (phase %d): unexpected payload %x", i, phase, p.payload[:min(len(p.payload), 12)])
		}
	}
	if phase != 3 || ringN < 10 || agentN < 50 {
		t.Errorf("phases %d, ringback frames %d, agent packets %d", phase, ringN, agentN)
	}
	if st := c.Stats(); st.Played < 60 {
		t.Errorf("played %d frames", st.Played)
	}
}

func TestHold(t *testing.T) {
	e := newTestEngine(t)
	c := e.NewCall(CallOptions{})
	defer c.Close()
	plat := connectPlatform(t, c)
	agent := connectAgent(t, c)
	c.Bridge()
	stopP := plat.startSending("PLAT")
	stopA := agent.startSending("AGNT")
	time.Sleep(500 * time.Millisecond)

	music := BuiltinHold()
	c.Hold(music)
	time.Sleep(100 * time.Millisecond) // packets in flight
	pBefore, aBefore := len(plat.received()), len(agent.received())
	time.Sleep(1500 * time.Millisecond)
	holdPkts := plat.received()[pBefore:]
	agentDuring := len(agent.received()) - aBefore

	if agentDuring != 0 {
		t.Errorf("agent received %d packets on hold", agentDuring)
	}
	if len(holdPkts) < 60 {
		t.Fatalf("platform received %d packets in 1.5 s of hold", len(holdPkts))
	}
	// The music is the clip's frames in order, and no agent packet.
	start := -1
	for i := 0; i < music.Frames(); i++ {
		if bytes.Equal(holdPkts[0].payload, music.Frame(i)) {
			start = i
			break
		}
	}
	if start < 0 || start > 10 {
		t.Fatalf("hold music does not start at the clip's start (frame %d)", start)
	}
	for i, p := range holdPkts {
		if !bytes.Equal(p.payload, music.Frame((start+i)%music.Frames())) {
			t.Fatalf("hold packet %d is not music frame %d (tag %q)", i, start+i, func() string { g, _ := parseTag(p.payload); return g }())
		}
	}

	// Resume: the agent is heard again, on the same seq/ts space.
	c.Bridge()
	time.Sleep(700 * time.Millisecond)
	stopP()
	stopA()
	time.Sleep(100 * time.Millisecond)
	after := plat.received()[pBefore+len(holdPkts):]
	if n := tags(after)["AGNT"]; n < 20 {
		t.Errorf("after resume the platform received %d agent packets", n)
	}
	if n := len(agent.received()) - aBefore - agentDuring; n < 20 {
		t.Errorf("after resume the agent received %d packets", n)
	}
	checkContinuous(t, plat.received())
}

func TestAnswerAgentTwiceReplacesLeg(t *testing.T) {
	e := newTestEngine(t)
	c := e.NewCall(CallOptions{})
	defer c.Close()
	plat := connectPlatform(t, c)
	first := connectAgent(t, c)
	c.Bridge()
	stopP := plat.startSending("PLAT")
	first.sendFor("AGT1", 500*time.Millisecond)
	waitFor(t, "the first agent to hear the platform", 2*time.Second, func() bool { return first.count() > 5 })

	second := connectAgent(t, c)
	waitFor(t, "the first agent leg to close", 5*time.Second, func() bool {
		s := first.pc.ConnectionState()
		return s == webrtc.PeerConnectionStateDisconnected || s == webrtc.PeerConnectionStateFailed ||
			s == webrtc.PeerConnectionStateClosed
	})
	n1 := first.count()
	nA := second.sendFor("AGT2", 2*time.Second)
	nP := stopP()
	time.Sleep(200 * time.Millisecond)

	if d := first.count() - n1; d > 0 {
		t.Errorf("the replaced agent still received %d packets", d)
	}
	checkCrossing(t, "second agent", second.received(), "PLAT", nP*2/3)
	got := plat.received()
	var agt2 int
	for _, p := range got {
		if tag, _ := parseTag(p.payload); tag == "AGT2" {
			agt2++
		}
	}
	if agt2 < nA*8/10 {
		t.Errorf("platform received %d of %d second-agent packets", agt2, nA)
	}
	checkContinuous(t, got)
}

func TestCloseIdempotentAndPlatformGone(t *testing.T) {
	e := newTestEngine(t)
	var gone atomic.Int32
	c := e.NewCall(CallOptions{OnPlatformGone: func() { gone.Add(1) }})
	connectPlatform(t, c)
	connectAgent(t, c)
	c.Play(BuiltinRingback())
	r1 := c.Close()
	r2 := c.Close()
	if r1 != r2 || r1.Talk != 0 || r1.PlatformFile != "" {
		t.Errorf("Close: %+v then %+v", r1, r2)
	}
	if st := c.Stats(); st.Mode != "closed" {
		t.Errorf("mode after Close: %s", st.Mode)
	}
	// Operations on a closed call do nothing or fail.
	c.Bridge()
	c.Hold(nil)
	if _, err := c.AnswerAgent(context.Background(), newTestPeer(t).offer()); err == nil {
		t.Error("AnswerAgent on a closed call succeeded")
	}
	time.Sleep(300 * time.Millisecond)
	if gone.Load() != 0 {
		t.Error("OnPlatformGone was called for our own Close")
	}

	// The caller vanishing is reported once.
	c2 := e.NewCall(CallOptions{OnPlatformGone: func() { gone.Add(1) }})
	defer c2.Close()
	plat := connectPlatform(t, c2)
	c2.Play(BuiltinRingback())
	_ = plat.pc.Close()
	waitFor(t, "OnPlatformGone", 15*time.Second, func() bool { return gone.Load() == 1 })
	time.Sleep(300 * time.Millisecond)
	if gone.Load() != 1 {
		t.Errorf("OnPlatformGone called %d times", gone.Load())
	}
}

func TestOutgoingCall(t *testing.T) {
	e := newTestEngine(t)
	c := e.NewCall(CallOptions{})
	defer c.Close()
	callee := newTestPeer(t)
	off, err := c.OfferPlatform(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetPlatformAnswer("nonsense"); !errors.Is(err, ErrBadSDP) {
		t.Errorf("SetPlatformAnswer(nonsense) = %v", err)
	}
	if err := c.SetPlatformAnswer(callee.answer(off)); err != nil {
		t.Fatal(err)
	}
	callee.waitConnected()
	agent := connectAgent(t, c)
	c.Bridge()
	stop := callee.startSending("CALE")
	nA := agent.sendFor("AGNT", 2*time.Second)
	nP := stop()
	time.Sleep(200 * time.Millisecond)
	checkCrossing(t, "agent", agent.received(), "CALE", nP)
	checkCrossing(t, "callee", callee.received(), "AGNT", nA)
}

func TestRecordingAndMix(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg not installed")
	}
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("ffprobe not installed")
	}
	dir := t.TempDir()
	e := newTestEngine(t)
	c := e.NewCall(CallOptions{RecordDir: filepath.Join(dir, "call")})
	plat := connectPlatform(t, c)
	c.Play(BuiltinRingback())
	agent := connectAgent(t, c)
	time.Sleep(500 * time.Millisecond) // ringback: not recorded

	c.Bridge()
	talkStart := time.Now()
	stopP := plat.startSending("PLAT")
	agent.sendFor("AGNT", time.Second)
	// The agent goes silent for 1.5 s (no packets at all), the caller keeps on.
	time.Sleep(1500 * time.Millisecond)
	agent.sendFor("AGNT", 500*time.Millisecond)
	c.Hold(nil)
	time.Sleep(500 * time.Millisecond)
	c.Bridge()
	stopP()
	// Both legs silent for 1 s before the hangup.
	time.Sleep(time.Second)
	rec := c.Close()
	wall := time.Since(talkStart)

	if rec.PlatformFile == "" || rec.AgentFile == "" {
		t.Fatalf("recording: %+v", rec)
	}
	if math.Abs(rec.Talk.Seconds()-wall.Seconds()) > 0.05 {
		t.Errorf("Talk %v, wall %v", rec.Talk, wall)
	}
	ctx := context.Background()
	for _, f := range []string{rec.PlatformFile, rec.AgentFile} {
		d, err := probeDuration(ctx, "ffprobe", f)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d.Seconds()-rec.Talk.Seconds()) > 0.05*rec.Talk.Seconds() {
			t.Errorf("%s lasts %v, talk %v", filepath.Base(f), d, rec.Talk)
		}
		// The tagged packets and the gap-filling silence decode cleanly.
		if msg, err := exec.Command(ffmpeg, "-v", "error", "-i", f, "-f", "null", "-").CombinedOutput(); err != nil || len(msg) > 0 {
			t.Errorf("decoding %s: %v %s", filepath.Base(f), err, msg)
		}
	}
	out := filepath.Join(dir, "mix.ogg")
	d, err := Mix(ctx, ffmpeg, rec, out)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d.Seconds()-wall.Seconds()) > 0.05*wall.Seconds() {
		t.Errorf("mix lasts %v, talk wall time %v (> 5%% off)", d, wall)
	}
	// ffmpeg decodes the whole mix without error.
	if msg, err := exec.Command(ffmpeg, "-v", "error", "-i", out, "-f", "null", "-").CombinedOutput(); err != nil || len(msg) > 0 {
		t.Errorf("decoding the mix: %v %s", err, msg)
	}
	t.Logf("talk %v, mix %v", wall, d)

	// With nothing recorded there is nothing to mix.
	if _, err := Mix(ctx, ffmpeg, Recording{}, filepath.Join(dir, "none.ogg")); err == nil {
		t.Error("Mix of an empty recording succeeded")
	}
}

func TestLoadOgg(t *testing.T) {
	for name, a := range map[string]*Audio{"ringback": BuiltinRingback(), "hold": BuiltinHold()} {
		want := map[string]time.Duration{"ringback": 6 * time.Second, "hold": 12 * time.Second}[name]
		if d := time.Duration(a.Duration()); d < want-100*time.Millisecond || d > want+100*time.Millisecond {
			t.Errorf("%s lasts %v, want %v", name, d, want)
		}
		for i := 0; i < a.Frames(); i++ {
			if opusSamples(a.Frame(i)) != 960 {
				t.Fatalf("%s frame %d is not 20 ms", name, i)
			}
		}
	}
	for name, b := range map[string][]byte{"empty": nil, "garbage": []byte("not an ogg file at all, really not")} {
		if _, err := LoadOgg(bytes.NewReader(b)); err == nil {
			t.Errorf("LoadOgg(%s) succeeded", name)
		}
	}
	// Headers only, no Opus frame: refused.
	path := filepath.Join(t.TempDir(), "empty.ogg")
	w, err := oggwriter.New(path, sampleRate, 1)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := LoadOgg(f); err == nil {
		t.Error("LoadOgg of a file without frames succeeded")
	}
	// A file ffmpeg writes with many packets per page and 60 ms frames.
	if _, err := exec.LookPath("ffmpeg"); err == nil {
		p := filepath.Join(t.TempDir(), "tone.ogg")
		cmd := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=f=300:d=3", "-c:a", "libopus", "-frame_duration", "60", p)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v %s", err, out)
		}
		b, _ := os.ReadFile(p)
		a, err := LoadOgg(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Duration(a.Duration()); d < 2900*time.Millisecond || d > 3100*time.Millisecond || a.Frames() > 60 {
			t.Errorf("60 ms clip: %d frames, %v", a.Frames(), d)
		}
	}
}
