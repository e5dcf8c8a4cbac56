package media

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// The benchmark's peers run in a child process (this test binary re-executed
// with benchPeersEnv set), so that getrusage in the benchmark's process counts
// the bridge's CPU only, not the peers'.
const benchPeersEnv = "MEDIA_BENCH_PEERS"

func TestMain(m *testing.M) {
	if n := os.Getenv(benchPeersEnv); n != "" {
		runBenchPeers(n)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchMsg is one line between the benchmark and its peer process.
type benchMsg struct {
	ID       int    `json:"id"`
	SDP      string `json:"sdp,omitempty"`
	Event    string `json:"event,omitempty"` // "offer", "answer", "start", "done"
	Sent     int64  `json:"sent,omitempty"`
	Received int64  `json:"received,omitempty"`
}

// runBenchPeers is the peer process: "calls,seconds" in the environment; 2
// peers per call (platform, agent), each sending 50 pps for the given seconds
// once all are connected.
func runBenchPeers(spec string) {
	var calls, secs int
	if _, err := fmt.Sscanf(spec, "%d,%d", &calls, &secs); err != nil {
		fmt.Fprintln(os.Stderr, "bad", benchPeersEnv, spec)
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	tb := processTB{}
	peers := make([]*testPeer, 2*calls)
	var received atomic.Int64
	for i := range peers {
		p := newTestPeer(tb)
		p.keep = false
		p.onPacket = func(*rtp.Packet, time.Time) { received.Add(1) }
		peers[i] = p
	}
	// Answers are read while offers are still being written: both directions
	// through pipes of limited size would otherwise block each other.
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		for range peers {
			var m benchMsg
			if err := dec.Decode(&m); err != nil {
				tb.Fatal(err)
			}
			if err := peers[m.ID].pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: m.SDP}); err != nil {
				tb.Fatal(err)
			}
		}
	}()
	for i, p := range peers {
		if err := enc.Encode(benchMsg{ID: i, Event: "offer", SDP: p.offer()}); err != nil {
			tb.Fatal(err)
		}
	}
	<-answered
	for _, p := range peers {
		select {
		case <-p.conn:
		case <-time.After(60 * time.Second):
			fmt.Fprintln(os.Stderr, "peer process: a peer did not connect")
			os.Exit(2)
		}
	}
	received.Store(0)
	_ = enc.Encode(benchMsg{Event: "start"})
	// One ticker for all peers: 50 pps each, like a browser's 20 ms frames.
	t := time.NewTicker(20 * time.Millisecond)
	var sent int64
	end := time.Now().Add(time.Duration(secs) * time.Second)
	pkt := rtp.Packet{Header: rtp.Header{Version: 2, PayloadType: 111}}
	for i := uint32(0); time.Now().Before(end); i++ {
		pkt.SequenceNumber = uint16(i)
		pkt.Timestamp = i * 960
		pkt.Payload = tagged("BNCH", i)
		for _, p := range peers {
			if p.track.WriteRTP(&pkt) == nil {
				sent++
			}
		}
		<-t.C
	}
	time.Sleep(200 * time.Millisecond)
	_ = enc.Encode(benchMsg{Event: "done", Sent: sent, Received: received.Load()})
	var wg sync.WaitGroup
	for _, p := range peers {
		wg.Add(1)
		go func() { defer wg.Done(); _ = p.pc.Close() }()
	}
	wg.Wait()
}

// processTB lets the peer helpers run outside a test: a failure ends the
// process, which the benchmark sees as a broken pipe.
type processTB struct{ testing.TB }

func (processTB) Helper()        {}
func (processTB) Cleanup(func()) {}
func (processTB) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"peer process:"}, args...)...)
	os.Exit(2)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBridgedCalls runs N concurrent bridged calls, each leg's peer sending
// 50 pps, for a few seconds, and reports the forwarding delay the bridge adds
// (p50/p99, from the engine's histogram: ReadRTP on one leg returning to
// WriteRTP on the other returning) and the bridge process's CPU per call, as a
// percentage of one core and as calls per core. b.N is not used: one run is a
// fixed-duration measurement.
func BenchmarkBridgedCalls(b *testing.B) {
	secs := 5
	if s := os.Getenv("MEDIA_BENCH_SECONDS"); s != "" {
		secs, _ = strconv.Atoi(s)
	}
	for _, n := range []int{10, 50, 100} {
		b.Run(fmt.Sprintf("calls=%d", n), func(b *testing.B) { benchBridged(b, n, secs, false) })
	}
	b.Run("calls=100/recording", func(b *testing.B) { benchBridged(b, 100, secs, true) })
}

func benchBridged(b *testing.B, n, secs int, record bool) {
	e, err := NewEngine(Config{})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d,%d", benchPeersEnv, n, secs))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	enc := json.NewEncoder(stdin)
	dec := json.NewDecoder(bufio.NewReader(stdout))

	calls := make([]*Call, n)
	dir := b.TempDir()
	for i := range calls {
		var opts CallOptions
		if record {
			opts.RecordDir = fmt.Sprintf("%s/call%d", dir, i)
		}
		calls[i] = e.NewCall(opts)
	}
	defer func() {
		for _, c := range calls {
			c.Close()
		}
	}()
	// Answer the 2n offers: id 2i is call i's platform leg, 2i+1 its agent.
	ctx := context.Background()
	for range 2 * n {
		var m benchMsg
		if err := dec.Decode(&m); err != nil || m.Event != "offer" {
			b.Fatalf("peer process: %v %+v", err, m)
		}
		c := calls[m.ID/2]
		answer := c.AnswerPlatform
		if m.ID%2 == 1 {
			answer = c.AnswerAgent
		}
		sdp, err := answer(ctx, m.SDP)
		if err != nil {
			b.Fatal(err)
		}
		if err := enc.Encode(benchMsg{ID: m.ID, Event: "answer", SDP: sdp}); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range calls {
		c.Bridge()
	}
	var start benchMsg
	if err := dec.Decode(&start); err != nil || start.Event != "start" {
		b.Fatalf("peer process: %v %+v", err, start)
	}
	before := make([]Stats, n)
	for i, c := range calls {
		before[i] = c.Stats()
	}
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()

	var done benchMsg
	if err := dec.Decode(&done); err != nil || done.Event != "done" {
		b.Fatalf("peer process: %v %+v", err, done)
	}
	cpu, wall := cpuTime()-cpu0, time.Since(t0)
	b.StopTimer()

	var hist DelayHistogram
	var fwd uint64
	for i, c := range calls {
		st := c.Stats()
		h := st.ForwardDelay
		for j := range h.Counts {
			h.Counts[j] -= before[i].ForwardDelay.Counts[j]
		}
		hist.Add(h)
		fwd += st.PlatformToAgent + st.AgentToPlatform - before[i].PlatformToAgent - before[i].AgentToPlatform
	}
	perCall := cpu.Seconds() / wall.Seconds() / float64(n) // cores per call
	b.ReportMetric(float64(hist.Quantile(.5))/1e3, "p50-µs")
	b.ReportMetric(float64(hist.Quantile(.99))/1e3, "p99-µs")
	b.ReportMetric(perCall*100, "%core/call")
	b.ReportMetric(1/perCall, "calls/core")
	b.ReportMetric(float64(fwd)/wall.Seconds(), "fwd-pkts/s")
	b.ReportMetric(float64(done.Received)/float64(max(done.Sent, 1))*100, "%delivered")
	if done.Received < done.Sent*8/10 {
		b.Errorf("peers received %d of %d packets sent", done.Received, done.Sent)
	}
}
