package calling_test

import (
	"strings"
	"testing"

	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
)

// FuzzCheckSDPOffer feeds any text to the offer check that runs before any
// call is touched and checks that it never panics, refuses only with a 400
// of its two fixed messages (never echoing the input), accepts exactly
// what starts with v=0 and has an m=audio line once trimmed, ignores
// surrounding whitespace, and that accepting an offer survives appending
// more lines (a browser adds candidates and attributes).
func FuzzCheckSDPOffer(f *testing.F) {
	for _, seed := range []string{
		"",
		"v=0",
		"v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n",
		"v=0\nm=video 9 UDP/TLS/RTP/SAVPF 96\n",
		"  \r\n v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=rtpmap:111 opus/48000/2\r\n",
		"m=audio 9 RTP/AVP 0\nv=0",
		"v=0m=audio",
		"v=0\r\n\x00m=audio",
		strings.Repeat("v=0\n", 1000) + "m=audio 1",
	} {
		f.Add(seed)
	}
	const (
		missing = "sdp_offer is required (the browser's SDP offer)"
		notSDP  = "sdp_offer is not an SDP offer with audio: it must start with v=0 and have an m=audio line"
	)
	f.Fuzz(func(t *testing.T, sdp string) {
		err := calling.CheckSDPOffer(sdp)
		s := strings.TrimSpace(sdp)
		want := strings.HasPrefix(s, "v=0") && strings.Contains(s, "\nm=audio")
		if (err == nil) != want {
			t.Fatalf("CheckSDPOffer(%q) = %v, want accepted %v", sdp, err, want)
		}
		if err != nil {
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("refusal of kind %v: %v", apperr.KindOf(err), err)
			}
			if msg := err.Error(); msg != missing && msg != notSDP {
				t.Fatalf("refusal message %q", msg)
			}
			if (s == "") != (err.Error() == missing) {
				t.Fatalf("%q answered %q", sdp, err.Error())
			}
		}
		if got := calling.CheckSDPOffer(" \r\n\t" + sdp + "\r\n "); (got == nil) != (err == nil) {
			t.Fatalf("surrounding whitespace changed the answer for %q: %v then %v", sdp, err, got)
		}
		if err == nil {
			if more := calling.CheckSDPOffer(sdp + "\r\na=candidate:1 1 udp 2130706431 127.0.0.1 50000 typ host\r\n"); more != nil {
				t.Fatalf("an accepted offer with one more line is refused: %v", more)
			}
		}
	})
}
