package rtcpeer

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// pair connects two peers on loopback: a offers, b answers.
func pair(t *testing.T) (a, b *Peer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := New("alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	b, err = New("bob")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })

	offer, err := a.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"m=audio ", "a=rtpmap:111 opus/48000/2", "a=sendrecv", "a=candidate:", "127.0.0.1"} {
		if !strings.Contains(offer, want) {
			t.Errorf("offer lacks %q:\n%s", want, offer)
		}
	}
	if strings.Contains(offer, ".local") {
		t.Errorf("offer has an mDNS candidate:\n%s", offer)
	}
	answer, err := b.Answer(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "a=candidate:") || !strings.Contains(answer, "opus/48000/2") {
		t.Errorf("answer:\n%s", answer)
	}
	if err := a.SetAnswer(answer); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*Peer{a, b} {
		if err := p.Connected(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second) // that it happens, not how soon: a busy machine is slow
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkReceived proves that every packet to got came from from, unchanged,
// in order and with consecutive RTP numbering.
func checkReceived(t *testing.T, from, to *Peer, tag string) {
	t.Helper()
	sent := from.Sent()
	got := to.Received()
	if len(got) == 0 {
		t.Fatalf("%s received nothing", to.Name())
	}
	var lastCounter uint32
	for i, pkt := range got {
		gotTag, counter, ok := Tagged(pkt.Payload)
		if !ok || gotTag != tag {
			t.Fatalf("%s packet %d not tagged %q: % x", to.Name(), i, tag, pkt.Payload)
		}
		if int(counter) >= len(sent) || !bytes.Equal(sent[counter], pkt.Payload) {
			t.Fatalf("%s packet %d (counter %d) differs from what %s sent", to.Name(), i, counter, from.Name())
		}
		if i > 0 {
			prev := got[i-1]
			if counter <= lastCounter || pkt.SequenceNumber-prev.SequenceNumber != uint16(counter-lastCounter) ||
				pkt.Timestamp-prev.Timestamp != frameSamples*(counter-lastCounter) || pkt.SSRC != prev.SSRC {
				t.Fatalf("%s packet %d: seq %d ts %d ssrc %d after seq %d ts %d ssrc %d", to.Name(), i,
					pkt.SequenceNumber, pkt.Timestamp, pkt.SSRC, prev.SequenceNumber, prev.Timestamp, prev.SSRC)
			}
		}
		lastCounter = counter
	}
}

func TestAudioBothWays(t *testing.T) {
	a, b := pair(t)
	a.StartSending("alice-1")
	b.StartSending("bob-1")
	waitFor(t, "25 packets each way", func() bool {
		return b.ReceivedFrom("alice-1") >= 25 && a.ReceivedFrom("bob-1") >= 25
	})
	a.StopSending()
	b.StopSending()
	// In-flight packets land within a few milliseconds on loopback.
	time.Sleep(200 * time.Millisecond)

	checkReceived(t, a, b, "alice-1")
	checkReceived(t, b, a, "bob-1")
	if n := b.ReceivedFrom("bob-1"); n != 0 {
		t.Errorf("bob heard himself %d times", n)
	}
	// Loopback loses nothing worth mentioning: almost all that was sent
	// arrived.
	if sent, got := len(a.Sent()), b.ReceivedFrom("alice-1"); got < sent-2 {
		t.Errorf("alice sent %d, bob got %d", sent, got)
	}
	// Stopped means stopped.
	n := len(b.Received())
	time.Sleep(100 * time.Millisecond)
	if m := len(b.Received()); m != n {
		t.Errorf("bob still receiving after stop: %d then %d", n, m)
	}

	// A restart with another tag continues the counters.
	before := len(a.Sent())
	a.StartSending("alice-2")
	waitFor(t, "the second tag", func() bool { return b.ReceivedFrom("alice-2") >= 3 })
	a.StopSending()
	for _, p := range b.Received() {
		if tag, counter, _ := Tagged(p.Payload); tag == "alice-2" && int(counter) < before {
			t.Fatalf("counter %d restarted below %d", counter, before)
		}
	}
}

func TestSetAnswerTwice(t *testing.T) {
	ctx := context.Background()
	a, err := New("a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New("b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := New("c")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	offer, err := a.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := b.Answer(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.Answer(ctx, offer)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetAnswer("not sdp"); err == nil {
		t.Fatal("a garbage answer was accepted")
	}
	if err := a.SetAnswer(answer); err != nil {
		t.Fatal(err)
	}
	if err := a.SetAnswer(answer); err != nil {
		t.Errorf("same answer again: %v", err)
	}
	if err := a.SetAnswer(other); !errors.Is(err, ErrAnswerConflict) {
		t.Errorf("different answer: %v", err)
	}
}

func TestClosedPeer(t *testing.T) {
	a, err := New("a")
	if err != nil {
		t.Fatal(err)
	}
	a.StartSending("x") // waits for a connection that never comes
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if err := a.Connected(context.Background()); !errors.Is(err, ErrEnded) {
		t.Errorf("connected after close: %v", err)
	}
	if len(a.Sent()) != 0 {
		t.Errorf("sent %d packets without a connection", len(a.Sent()))
	}
}

func TestTagged(t *testing.T) {
	p := Payload("abc123", 0x01020304)
	if len(p) != payloadSize || p[0] != 0xF8 {
		t.Fatalf("payload % x", p)
	}
	tag, counter, ok := Tagged(p)
	if !ok || tag != "abc123" || counter != 0x01020304 {
		t.Errorf("Tagged = %q %x %v", tag, counter, ok)
	}
	long := strings.Repeat("x", 50)
	if tag, _, ok := Tagged(Payload(long, 7)); !ok || tag != long[:maxTagLen] {
		t.Errorf("long tag = %q %v", tag, ok)
	}
	for _, foreign := range [][]byte{nil, {0xF8}, {0xF8, 0xFF, 0xFE, 0x01}, {0x78, 'W', 1, 'a', 0, 0, 0, 1}, {0xF8, 'W', 9, 'a'}} {
		if _, _, ok := Tagged(foreign); ok {
			t.Errorf("Tagged(% x) accepted", foreign)
		}
	}
}
