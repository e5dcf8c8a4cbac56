package media

import (
	"time"

	"github.com/pion/rtp"
)

// player loops an Audio clip to an outStream, paced by a 20 ms ticker, until
// stopped. Each player is its own source, so the stream re-bases timestamps
// when it starts and when whatever follows it starts.
type player struct {
	stop chan struct{}
	done chan struct{}
}

// frameTick is the pacing of players: one Opus frame of the usual 20 ms.
const frameTick = 20 * time.Millisecond

// maxLag is how far a player may fall behind (a stalled scheduler) before it
// skips ahead instead of bursting the backlog at the receiver.
const maxLag = 100 * time.Millisecond

func startPlayer(a *Audio, out *outStream, played func()) *player {
	pl := &player{stop: make(chan struct{}), done: make(chan struct{})}
	go pl.run(a, out, played)
	return pl
}

func (pl *player) run(a *Audio, out *outStream, played func()) {
	defer close(pl.done)
	src := &source{name: "player"}
	t := time.NewTicker(frameTick)
	defer t.Stop()
	var (
		p      rtp.Packet
		i      int
		srcSeq uint16        // the player's own numbering; the outStream maps it onto
		srcTS  uint32        // its own (and rewrites p's header in doing so)
		sent   time.Duration // audio time sent so far
		start  = time.Now()
		now    = start
	)
	p.Version = 2
	p.PayloadType = uint8(opusCodec.PayloadType)
	for {
		// Send every frame that is due: one per tick for 20 ms frames, more for
		// shorter ones, one every few ticks for longer ones.
		elapsed := now.Sub(start)
		if elapsed-sent > maxLag {
			sent = elapsed
		}
		for sent <= elapsed {
			p.Payload = a.frames[i]
			p.SequenceNumber, p.Timestamp = srcSeq, srcTS
			if out.write(src, &p, now) {
				played()
			}
			d := a.samples[i]
			sent += time.Duration(d) * time.Second / sampleRate
			srcSeq++
			srcTS += d
			i = (i + 1) % len(a.frames)
		}
		select {
		case <-pl.stop:
			return
		case now = <-t.C:
		}
	}
}

// halt stops the player and waits until it no longer writes.
func (pl *player) halt() {
	close(pl.stop)
	<-pl.done
}
