package media

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pion/webrtc/v4/pkg/media/oggreader"
)

// Audio is a clip of pre-encoded Opus packets (48 kHz) that a player loops to
// the platform leg. It is immutable once loaded and shared between calls.
type Audio struct {
	frames  [][]byte
	samples []uint32 // 48 kHz samples each frame covers, from its TOC byte
}

// Frames is the number of Opus packets in the clip.
func (a *Audio) Frames() int { return len(a.frames) }

// Duration is the clip's length in 48 kHz samples' time.
func (a *Audio) Duration() (d int64) {
	for _, s := range a.samples {
		d += int64(s)
	}
	return d * 1e9 / sampleRate
}

// Frame returns packet i (for tests and diagnostics; do not modify it).
func (a *Audio) Frame(i int) []byte { return a.frames[i] }

const sampleRate = 48000

// LoadOgg reads an OGG/Opus file. pion's oggreader does the page framing and
// CRC checks but returns a page's payload as one blob, and encoders such as
// ffmpeg put about a second of packets in a page; so the page's lacing table is
// recovered from the bytes the reader consumed (a tee) to split packets, joining
// packets that continue on the next page. The two header packets (OpusHead,
// OpusTags) are skipped. A file with no Opus audio packet is refused.
func LoadOgg(r io.Reader) (*Audio, error) {
	var raw bytes.Buffer
	rd, head, err := oggreader.NewWith(io.TeeReader(r, &raw))
	if err != nil {
		return nil, fmt.Errorf("media: not an OGG/Opus file: %w", err)
	}
	if head.Channels == 0 {
		return nil, errors.New("media: OGG/Opus header has no channels")
	}
	raw.Reset() // the OpusHead page was consumed by NewWith

	a := &Audio{}
	var partial []byte
	for {
		payload, _, err := rd.ParseNextPage()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("media: reading OGG page: %w", err)
		}
		pageBytes := raw.Bytes()
		if len(pageBytes) < 27 || int(pageBytes[26])+27 > len(pageBytes) {
			return nil, errors.New("media: short OGG page")
		}
		lacing := pageBytes[27 : 27+int(pageBytes[26])]
		off := 0
		for _, l := range lacing {
			if off+int(l) > len(payload) {
				return nil, errors.New("media: OGG lacing exceeds page payload")
			}
			partial = append(partial, payload[off:off+int(l)]...)
			off += int(l)
			if l < 255 { // a lacing value below 255 ends the packet
				a.add(partial)
				partial = nil
			}
		}
		raw.Reset()
	}
	if len(a.frames) == 0 {
		return nil, errors.New("media: OGG file has no Opus frames")
	}
	return a, nil
}

// add keeps one packet, dropping the OpusTags header and anything that is not
// a decodable Opus packet (an empty packet or a bad frame count).
func (a *Audio) add(pkt []byte) {
	if len(pkt) == 0 || bytes.HasPrefix(pkt, []byte("OpusTags")) || bytes.HasPrefix(pkt, []byte("OpusHead")) {
		return
	}
	n := opusSamples(pkt)
	if n == 0 {
		return
	}
	a.frames = append(a.frames, pkt)
	a.samples = append(a.samples, n)
}

// opusSamples is the number of 48 kHz samples an Opus packet covers (RFC 6716
// §3.1: the TOC's config gives the frame size, its code the frame count), 0 if
// the packet is malformed.
func opusSamples(pkt []byte) uint32 {
	if len(pkt) == 0 {
		return 0
	}
	toc := pkt[0]
	var frame uint32
	switch cfg := toc >> 3; {
	case cfg < 12: // SILK: 10, 20, 40, 60 ms
		frame = [4]uint32{480, 960, 1920, 2880}[cfg&3]
	case cfg < 16: // hybrid: 10, 20 ms
		frame = [2]uint32{480, 960}[cfg&1]
	default: // CELT: 2.5, 5, 10, 20 ms
		frame = [4]uint32{120, 240, 480, 960}[cfg&3]
	}
	var count uint32
	switch toc & 3 {
	case 0:
		count = 1
	case 1, 2:
		count = 2
	case 3:
		if len(pkt) < 2 {
			return 0
		}
		count = uint32(pkt[1] & 0x3f)
	}
	if n := frame * count; n > 0 && n <= 5760 { // at most 120 ms
		return n
	}
	return 0
}

//go:embed assets/ringback.ogg
var ringbackOgg []byte

//go:embed assets/hold.ogg
var holdOgg []byte

var (
	ringbackOnce, holdOnce sync.Once
	ringback, hold         *Audio
)

// BuiltinRingback is a ring cadence (440+480 Hz, 2 s on, 4 s off), played to a
// caller waiting for an agent when the organization uploaded no ringback file.
func BuiltinRingback() *Audio {
	ringbackOnce.Do(func() { ringback = mustLoad(ringbackOgg, "ringback") })
	return ringback
}

// BuiltinHold is a soft 12 s chord loop, the hold music when the organization
// uploaded none.
func BuiltinHold() *Audio {
	holdOnce.Do(func() { hold = mustLoad(holdOgg, "hold") })
	return hold
}

func mustLoad(b []byte, name string) *Audio {
	a, err := LoadOgg(bytes.NewReader(b))
	if err != nil { // the files are embedded and covered by a test
		panic("media: embedded " + name + " audio: " + err.Error())
	}
	return a
}
