package media

import (
	"testing"
	"time"

	"github.com/pion/rtp"
)

// TestOutStreamNumbering checks the rewriting without a network: sources
// alternate, one sends a late packet, and one DTX-like gap within a source.
func TestOutStreamNumbering(t *testing.T) {
	o, err := newOutStream("test")
	if err != nil {
		t.Fatal(err)
	}
	a, b := &source{name: "a"}, &source{name: "b"}
	now := time.Now()
	type sent struct {
		seq uint16
		ts  uint32
	}
	var out []sent
	send := func(src *source, seq uint16, ts uint32, at time.Duration) bool {
		p := rtp.Packet{Header: rtp.Header{Version: 2, SequenceNumber: seq, Timestamp: ts, SSRC: 42}, Payload: []byte{0xF8, 1}}
		ok := o.write(src, &p, now.Add(at))
		if ok {
			out = append(out, sent{p.SequenceNumber, p.Timestamp})
		}
		return ok
	}
	for i := range 5 { // a: 5 frames
		send(a, uint16(60000+i), uint32(7e6+960*i), time.Duration(i)*20*time.Millisecond)
	}
	if send(a, 60002, 7e6+1920, 100*time.Millisecond) {
		t.Error("a late packet of the same source was forwarded")
	}
	// b starts 500 ms after a's last packet, with its own unrelated numbering.
	send(b, 3, 123, 580*time.Millisecond)
	send(b, 4, 123+960, 600*time.Millisecond)
	send(b, 6, 123+960*10, 620*time.Millisecond) // a lost packet and a DTX gap
	// back to a, whose numbering moved on meanwhile
	send(a, 60100, 8e6, 700*time.Millisecond)

	if len(out) != 9 {
		t.Fatalf("sent %d packets, want 9", len(out))
	}
	for i := 1; i < len(out); i++ {
		if out[i].seq != out[i-1].seq+1 {
			t.Errorf("packet %d: seq %d after %d", i, out[i].seq, out[i-1].seq)
		}
	}
	deltas := []uint32{}
	for i := 1; i < len(out); i++ {
		deltas = append(deltas, out[i].ts-out[i-1].ts)
	}
	want := []uint32{960, 960, 960, 960, // a
		500 * 48, // b: the wall time since a's last packet
		960,      // b
		960 * 9,  // b's own gap is kept
		960 * 4,  // a again: the 80 ms of wall time since b's last packet
	}
	for i, w := range want {
		if deltas[i] != w {
			t.Errorf("timestamp delta %d = %d, want %d (all %v)", i, deltas[i], w, deltas)
		}
	}
	if o.sent.Load() != 9 || o.dropped.Load() != 1 {
		t.Errorf("sent %d dropped %d", o.sent.Load(), o.dropped.Load())
	}
}

func TestDelayHistogram(t *testing.T) {
	d := newDelayHist()
	for range 98 {
		d.observe(3 * time.Microsecond)
	}
	d.observe(400 * time.Microsecond)
	d.observe(2 * time.Second)
	h := d.snapshot()
	if h.Total() != 100 {
		t.Fatalf("total %d", h.Total())
	}
	if q := h.Quantile(.5); q < 3*time.Microsecond || q > 3750*time.Nanosecond {
		t.Errorf("p50 %v", q)
	}
	if q := h.Quantile(.99); q < 400*time.Microsecond || q > 500*time.Microsecond {
		t.Errorf("p99 %v", q)
	}
	if q := h.Quantile(1); q < time.Second {
		t.Errorf("p100 %v", q)
	}
	var sum DelayHistogram
	sum.Add(h)
	sum.Add(h)
	if sum.Total() != 200 {
		t.Errorf("merged total %d", sum.Total())
	}
}
