package media

import (
	"crypto/rand"
	"encoding/binary"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4"
)

// source identifies one producer of packets for an outStream: a player, or
// the remote track of one leg. Its identity (pointer) is what matters: when the
// producer writing to an outStream changes, the stream re-bases timestamps.
type source struct {
	name string
}

// outStream is one outgoing track with its own, continuous sequence-number and
// timestamp space (see the package comment). Writes are serialized by mu so
// that a player stopping and a relay starting never interleave numbering.
type outStream struct {
	track *webrtc.TrackLocalStaticRTP

	mu       sync.Mutex
	started  bool
	nextSeq  uint16
	lastTS   uint32    // timestamp of the last packet sent
	lastWall time.Time // when it was sent
	lastSrc  *source
	srcSeq   uint16 // the current source's sequence number of its last packet
	tsOffset uint32 // added to the current source's timestamps
	sent     atomic.Uint64
	dropped  atomic.Uint64
}

func newOutStream(id string) (*outStream, error) {
	t, err := webrtc.NewTrackLocalStaticRTP(opusCodec.RTPCodecCapability, id, "wharf-"+id)
	if err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // RFC 3550 §5.1: random initial sequence number and timestamp
	return &outStream{
		track:   t,
		nextSeq: binary.BigEndian.Uint16(b[0:2]),
		lastTS:  binary.BigEndian.Uint32(b[2:6]),
	}, nil
}

// write sends p (carrying src's own sequence number and timestamp) with the
// stream's numbering. p's header is modified; its payload is sent unchanged.
// It reports whether the packet was sent (false: late or duplicate).
func (o *outStream) write(src *source, p *rtp.Packet, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if src == o.lastSrc {
		// Same source: keep its timestamp deltas; refuse what goes backwards.
		if int16(p.SequenceNumber-o.srcSeq) <= 0 {
			o.dropped.Add(1)
			return false
		}
		ts := p.Timestamp + o.tsOffset
		if int32(ts-o.lastTS) < 0 {
			o.dropped.Add(1)
			return false
		}
		p.Marker = false
		p.Timestamp = ts
	} else {
		// A new source continues the timeline: last timestamp plus the wall
		// time since the last packet, and at least the last frame's length.
		adv := uint32(960)
		if o.started {
			if el := now.Sub(o.lastWall); el > 20*time.Millisecond {
				adv = uint32(math.Min(float64(el)*sampleRate/1e9, math.MaxInt32))
			}
		}
		ts := o.lastTS + adv
		o.tsOffset = ts - p.Timestamp
		p.Timestamp = ts
		p.Marker = true // start of a talk spurt for the receiver's playout
		o.lastSrc = src
	}
	o.srcSeq = p.SequenceNumber
	p.SequenceNumber = o.nextSeq
	o.nextSeq++
	o.lastTS = p.Timestamp
	o.lastWall = now
	o.started = true
	// Header extensions and CSRCs were negotiated on the other leg (ids differ);
	// none are negotiated on ours, so none are forwarded.
	p.Extension = false
	p.Extensions = nil
	p.CSRC = nil
	p.Padding = false
	p.PaddingSize = 0
	p.Header.PaddingSize = 0
	if err := o.track.WriteRTP(p); err != nil {
		// A write error means a binding's transport is closing; the number is
		// spent (the receiver sees a loss), which keeps numbering simple.
		o.dropped.Add(1)
		return false
	}
	o.sent.Add(1)
	return true
}

// readLoop reads the remote track of one leg until it ends, records what it
// receives during the talk period and, while bridged, forwards it to the other
// leg's outStream. It runs in its own goroutine per remote track.
func (c *Call) readLoop(from legKind, tr *webrtc.TrackRemote) {
	src := &source{name: from.String()}
	buf := make([]byte, 1500)
	var p rtp.Packet
	st := &c.stats[from]
	for {
		n, _, err := tr.Read(buf)
		if err != nil {
			return
		}
		now := time.Now()
		if err := p.Unmarshal(buf[:n]); err != nil || len(p.Payload) == 0 {
			continue
		}
		st.received.Add(1)
		m := mode(c.mode.Load())
		if m == modeBridge && c.live[from.other()].Load() {
			// The write does not change the payload, which the recorder
			// then uses: forwarding goes first, the file write after.
			if c.out[from.other()].write(src, &p, now) {
				st.forwarded.Add(1)
				c.delay.observe(time.Since(now))
			}
		}
		if m == modeBridge || m == modeHold {
			c.record(from, p.Payload, now)
		}
	}
}

// delayBuckets are the upper bounds (µs) of the forwarding-delay histogram:
// 1 µs to ~1 s, 25 % apart.
var delayBuckets = func() []float64 {
	var b []float64
	for v := 1.0; v < 1.2e6; v *= 1.25 {
		b = append(b, v)
	}
	return b
}()

// DelayHistogram counts forwarding delays (ReadRTP on one leg returning to
// WriteRTP on the other returning) in logarithmic buckets.
type DelayHistogram struct {
	Counts []uint64 // Counts[i]: delays ≤ Bound(i) and > Bound(i-1); last: larger
}

// Bound is the upper bound of bucket i.
func (h DelayHistogram) Bound(i int) time.Duration {
	if i >= len(delayBuckets) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(delayBuckets[i] * 1e3)
}

// Total is the number of delays counted.
func (h DelayHistogram) Total() (n uint64) {
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Quantile is the upper bound of the bucket holding quantile q (0..1), so an
// overestimate by at most 25 %; 0 when empty.
func (h DelayHistogram) Quantile(q float64) time.Duration {
	total := h.Total()
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	if rank == 0 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			return h.Bound(i)
		}
	}
	return h.Bound(len(h.Counts) - 1)
}

// Add accumulates o into h (to merge calls).
func (h *DelayHistogram) Add(o DelayHistogram) {
	if len(h.Counts) < len(o.Counts) {
		h.Counts = append(h.Counts, make([]uint64, len(o.Counts)-len(h.Counts))...)
	}
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
}

// delayHist is the lock-free live form of DelayHistogram.
type delayHist struct {
	counts []atomic.Uint64 // len(delayBuckets)+1
}

func newDelayHist() *delayHist {
	return &delayHist{counts: make([]atomic.Uint64, len(delayBuckets)+1)}
}

func (d *delayHist) observe(el time.Duration) {
	// The first bucket whose bound is ≥ the delay; len(delayBuckets) if none.
	d.counts[sort.SearchFloat64s(delayBuckets, float64(el)/1e3)].Add(1)
}

func (d *delayHist) snapshot() DelayHistogram {
	h := DelayHistogram{Counts: make([]uint64, len(d.counts))}
	for i := range h.Counts {
		h.Counts[i] = d.counts[i].Load()
	}
	return h
}
