package media

import (
	"errors"
	"sync"
	"time"

	"github.com/pion/rtp"
	"github.com/pion/webrtc/v4/pkg/media/oggwriter"
)

// recorder writes the Opus packets received on one leg to an OGG file (pion's
// oggwriter), keeping the file's timeline on the wall clock of the talk period.
//
// An OGG/Opus file has no timestamps of its own: its length is the sum of its
// packets' durations (the granule position), so a leg that sends nothing for a
// while (muted browser with DTX, network outage, hold on a leg that stops) would
// make its file shorter than the call and the two legs would drift apart in the
// mix. So before each packet, and at the end, the recorder compares the audio
// time written with the wall time since the talk began and, when it is more than
// gapFill behind, inserts Opus silence frames to catch up. Smaller lags (jitter)
// are left alone, so the file never runs ahead of the wall clock for them. The
// header's pre-skip (which players subtract) is padded too, so the file's
// playable duration is the talk time.
type recorder struct {
	mu      sync.Mutex
	path    string
	w       *oggwriter.OggWriter
	start   time.Time
	written uint64 // 48 kHz samples written, pre-skip included
	pkt     rtp.Packet
	closed  bool
	err     error // first write error; the recording is then incomplete
}

// silenceFrame is a 20 ms CELT frame that decodes to silence (the frame WebRTC
// stacks send for muted audio).
var silenceFrame = []byte{0xF8, 0xFF, 0xFE}

const (
	preSkip = 3840 // pion's oggwriter's pre-skip (the RFC 7845 recommendation)
	gapFill = 100 * time.Millisecond
)

func newRecorder(path string, start time.Time) (*recorder, error) {
	w, err := oggwriter.New(path, sampleRate, 1)
	if err != nil {
		return nil, err
	}
	return &recorder{path: path, w: w, start: start}, nil
}

// due is the granule position the file should have reached at now.
func (r *recorder) due(now time.Time) uint64 {
	el := now.Sub(r.start)
	if el < 0 {
		el = 0
	}
	return uint64(el)*sampleRate/uint64(time.Second) + preSkip
}

// fill writes silence until the file is within one frame of target.
func (r *recorder) fill(target uint64) {
	for r.err == nil && r.written+960 < target {
		r.writeLocked(silenceFrame)
	}
}

func (r *recorder) writeLocked(payload []byte) {
	n := opusSamples(payload)
	if n == 0 {
		return // oggwriter would refuse it; not audio we can place
	}
	r.pkt.Payload = payload
	if err := r.w.WriteRTP(&r.pkt); err != nil {
		r.err = err
		return
	}
	r.written += uint64(n)
}

// write records one received packet's payload, received at now.
func (r *recorder) write(payload []byte, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.err != nil {
		return
	}
	// The packet itself covers the last frame before now.
	if target := r.due(now); r.written+uint64(gapFill/time.Millisecond)*sampleRate/1000 < target {
		r.fill(target - 960)
	}
	r.writeLocked(payload)
}

// close pads the file to end and closes it.
func (r *recorder) close(end time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.err
	}
	r.closed = true
	r.fill(r.due(end) + 480) // round to the nearest frame
	return errors.Join(r.err, r.w.Close())
}
