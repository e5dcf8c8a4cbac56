package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// The replay window: an organization's stream keeps its last MaxLen events
// and none older than Window (whichever is less; both trimmed approximately,
// so a few more may stay). A reconnect (a network blip, a token refresh, a
// laptop waking) comes back within seconds and gets what it missed; a client
// away for longer reloads its lists instead (the reset event), which costs it
// a few requests and costs the server no replay of thousands of events per
// user. Memory stays bounded: at most MaxLen events of a few hundred bytes per
// organization, and the key expires when the organization is quiet.
const (
	Window = 5 * time.Minute
	MaxLen = 1000
)

func streamKey(org uuid.UUID) string { return "wharf:live:{" + org.String() + "}" }
func channel(org uuid.UUID) string   { return "wharf:live:{" + org.String() + "}:pub" }

// publishScript appends an event to the organization's stream, trims the
// stream by length and age, and announces the event with its id on the
// organization's channel, as one step: a subscriber that sees the
// announcement finds the event in the stream, and nothing is announced that
// a replay would not give.
var publishScript = redis.NewScript(`
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
local ms = tonumber(string.match(id, '^(%d+)'))
redis.call('XTRIM', KEYS[1], 'MINID', '~', tostring(ms - tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PUBLISH', ARGV[5], id .. ' ' .. ARGV[2])
return id`)

// subBuffer is how many events a stream may fall behind before it is ended
// (the client reconnects and replays from its Last-Event-ID).
const subBuffer = 256

// Bus publishes events into Redis and, in the api, hands the events of
// the organizations it serves to their streams over one pub/sub
// connection.
type Bus struct {
	rdb redis.UniversalClient
	log *slog.Logger
	now func() time.Time

	mu   sync.Mutex
	ps   *redis.PubSub
	done chan struct{}       // closed by Close: stops the sweeper
	orgs map[string]*orgSubs // by channel
}

type orgSubs struct {
	ready chan struct{} // closed when Redis confirmed the subscription
	subs  map[*Sub]struct{}
	idle  time.Time // when its last stream left (zero while it has some)
}

// linger is how long an organization's channel stays subscribed after its
// last stream left: a console reconnects within seconds, and a subscription
// that outlives its streams by that long is never confused with the next
// one's (a SUBSCRIBE confirmed after an UNSUBSCRIBE sent meanwhile would
// otherwise tell a new stream it is subscribed before it is).
const linger = time.Minute

// NewBus builds the bus on rdb.
func NewBus(rdb redis.UniversalClient, log *slog.Logger) *Bus {
	return &Bus{rdb: rdb, log: log, now: time.Now, orgs: map[string]*orgSubs{}}
}

// Publish appends each event to the organization's stream and announces
// it. A failure is logged: the change itself has committed.
func (b *Bus) Publish(ctx context.Context, orgID uuid.UUID, events ...Event) {
	ctx = context.WithoutCancel(ctx)
	for _, e := range events {
		if e.At.IsZero() {
			e.At = b.now().UTC()
		}
		raw, err := json.Marshal(e)
		if err == nil {
			err = publishScript.Run(ctx, b.rdb, []string{streamKey(orgID)},
				MaxLen, string(raw), Window.Milliseconds(), (2 * Window).Milliseconds(), channel(orgID)).Err()
		}
		if err != nil {
			b.log.Warn("cannot publish a live event", "type", e.Type, "organization_id", orgID, "error", err)
		}
	}
}

// Since answers the organization's events after the position last (a
// Last-Event-ID), oldest first; reset when events after it may have left
// the window (the client reloads its lists), or last is not a position.
func (b *Bus) Since(ctx context.Context, orgID uuid.UUID, last string) (events []Event, reset bool, err error) {
	pos, ok := parseID(last)
	if !ok {
		return nil, true, nil
	}
	key := streamKey(orgID)
	pipe := b.rdb.Pipeline()
	first := pipe.XRangeN(ctx, key, "-", "+", 1)
	after := pipe.XRangeN(ctx, key, "("+last, "+", MaxLen*2)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, false, err
	}
	if len(first.Val()) == 0 {
		// Nothing kept: nothing happened for a while. Lost only if the
		// client's position is older than the window.
		return nil, time.UnixMilli(int64(pos[0])).Before(b.now().Add(-Window)), nil
	}
	if oldest, _ := parseID(first.Val()[0].ID); less(pos, oldest) {
		return nil, true, nil
	}
	for _, m := range after.Val() {
		if e, ok := decode(m.ID, m.Values["e"]); ok {
			events = append(events, e)
		}
	}
	return events, false, nil
}

func decode(id string, raw any) (Event, bool) {
	s, _ := raw.(string)
	var e Event
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		return e, false
	}
	e.ID = id
	return e, true
}

// Sub is one stream's subscription to its organization's events.
type Sub struct {
	bus  *Bus
	ch   string
	c    chan Event
	lost chan struct{}
	once sync.Once
}

// C delivers the organization's events as they are published.
func (s *Sub) C() <-chan Event { return s.c }

// Lost is closed when the subscription dropped events (its stream fell
// behind, or the connection to Redis broke): the stream must end so that
// its client reconnects and replays what it missed.
func (s *Sub) Lost() <-chan struct{} { return s.lost }

func (s *Sub) drop() { s.once.Do(func() { close(s.lost) }) }

// Close ends the subscription.
func (s *Sub) Close() {
	b := s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.orgs[s.ch]
	if o == nil {
		return
	}
	delete(o.subs, s)
	if len(o.subs) == 0 {
		o.idle = b.now()
	}
}

// sweep unsubscribes from the channels whose streams all left more than
// linger ago.
func (b *Bus) sweep() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ps == nil {
		return
	}
	for ch, o := range b.orgs {
		if len(o.subs) == 0 && !o.idle.IsZero() && b.now().Sub(o.idle) > linger {
			delete(b.orgs, ch)
			if err := b.ps.Unsubscribe(context.Background(), ch); err != nil {
				b.log.Debug("cannot unsubscribe from live events", "channel", ch, "error", err)
			}
		}
	}
}

// Subscribe subscribes to the organization's events and returns once Redis
// confirmed the subscription, so that a replay read after it and the live
// events overlap rather than leave a gap (the stream skips the overlap by
// id).
func (b *Bus) Subscribe(ctx context.Context, orgID uuid.UUID) (*Sub, error) {
	ch := channel(orgID)
	s := &Sub{bus: b, ch: ch, c: make(chan Event, subBuffer), lost: make(chan struct{})}
	b.mu.Lock()
	if b.ps == nil {
		b.ps = b.rdb.Subscribe(context.Background())
		b.done = make(chan struct{})
		go b.receive(b.ps)
		go func(done <-chan struct{}) {
			t := time.NewTicker(linger / 2)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					b.sweep()
				}
			}
		}(b.done)
	}
	o := b.orgs[ch]
	if o == nil {
		o = &orgSubs{ready: make(chan struct{}), subs: map[*Sub]struct{}{}}
		b.orgs[ch] = o
		if err := b.ps.Subscribe(ctx, ch); err != nil {
			delete(b.orgs, ch)
			b.mu.Unlock()
			return nil, err
		}
	}
	o.subs[s] = struct{}{}
	o.idle = time.Time{}
	b.mu.Unlock()
	select {
	case <-o.ready:
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	case <-time.After(10 * time.Second):
		s.Close()
		return nil, fmt.Errorf("live events: no subscription confirmation from Redis")
	}
}

// receive reads the pub/sub connection for the process's life. After a
// broken connection (go-redis reconnects and subscribes again) every
// subscription is marked lost: what was published meanwhile is in the
// replay streams, which the clients read when they reconnect.
func (b *Bus) receive(ps *redis.PubSub) {
	ctx := context.Background()
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if errors.Is(err, redis.ErrClosed) {
				return
			}
			b.log.Warn("live events: pub/sub connection failed; streams will replay", "error", err)
			b.mu.Lock()
			for _, o := range b.orgs {
				for s := range o.subs {
					s.drop()
				}
			}
			b.mu.Unlock()
			time.Sleep(time.Second)
			continue
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				b.mu.Lock()
				if o := b.orgs[m.Channel]; o != nil {
					select {
					case <-o.ready:
					default:
						close(o.ready)
					}
				}
				b.mu.Unlock()
			}
		case *redis.Message:
			id, raw, ok := strings.Cut(m.Payload, " ")
			if !ok {
				continue
			}
			e, ok := decode(id, raw)
			if !ok {
				continue
			}
			b.mu.Lock()
			if o := b.orgs[m.Channel]; o != nil {
				for s := range o.subs {
					select {
					case s.c <- e:
					default:
						s.drop()
					}
				}
			}
			b.mu.Unlock()
		}
	}
}

// Close ends the pub/sub connection.
func (b *Bus) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ps == nil {
		return nil
	}
	close(b.done)
	ps := b.ps
	b.ps = nil
	return ps.Close()
}

// parseID reads a stream id "<ms>-<seq>".
func parseID(id string) ([2]uint64, bool) {
	ms, seq, ok := strings.Cut(id, "-")
	if !ok {
		return [2]uint64{}, false
	}
	a, err1 := strconv.ParseUint(ms, 10, 64)
	c, err2 := strconv.ParseUint(seq, 10, 64)
	return [2]uint64{a, c}, err1 == nil && err2 == nil
}

func less(a, b [2]uint64) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }

// After reports whether stream position id comes after last (an id that
// is not a position comes after nothing).
func After(id, last string) bool {
	a, ok1 := parseID(id)
	b, ok2 := parseID(last)
	if !ok1 {
		return false
	}
	return !ok2 || less(b, a)
}
