package live

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// Stream limits: a user may hold PerUser streams at once across every api
// replica (a console tab holds one; a few tabs and an integration fit), and
// one process serves at most its configured number (each stream is a
// goroutine, a connection and a buffer; the benchmark holds 2,000).
const PerUser = 5

var (
	ErrUserStreams    = errors.New("too many open event streams for this user")
	ErrProcessStreams = errors.New("this server holds as many event streams as it can")
)

// SlotTTL is how long a stream's slot lives without being renewed: a
// stream renews it at every heartbeat, so the slot of a stream whose
// process died is free again after SlotTTL.
const SlotTTL = 45 * time.Second

var acquireScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`)

// Slots counts open streams per user (in Redis, across replicas) and per
// process.
type Slots struct {
	rdb        redis.UniversalClient
	perUser    int
	perProcess int64
	open       atomic.Int64
	draining   chan struct{}
	drainOnce  sync.Once
}

// NewSlots builds the limits.
func NewSlots(rdb redis.UniversalClient, perProcess int) *Slots {
	return &Slots{rdb: rdb, perUser: PerUser, perProcess: int64(perProcess), draining: make(chan struct{})}
}

// Drain asks every stream of the process to end (the server is shutting
// down: its clients reconnect to another replica and replay what they
// missed), and refuses new ones.
func (s *Slots) Drain() { s.drainOnce.Do(func() { close(s.draining) }) }

// Draining is closed once Drain was called.
func (s *Slots) Draining() <-chan struct{} { return s.draining }

// Open is how many streams this process serves now.
func (s *Slots) Open() int64 { return s.open.Load() }

// Slot is one stream's place.
type Slot struct {
	s      *Slots
	key    string
	member string
}

func slotKey(user uuid.UUID) string { return "wharf:live:streams:" + user.String() }

// Acquire takes a place for a stream of user, or answers ErrProcessStreams
// or ErrUserStreams.
func (s *Slots) Acquire(ctx context.Context, user uuid.UUID) (*Slot, error) {
	select {
	case <-s.draining:
		return nil, ErrProcessStreams
	default:
	}
	if s.open.Add(1) > s.perProcess {
		s.open.Add(-1)
		return nil, ErrProcessStreams
	}
	sl := &Slot{s: s, key: slotKey(user), member: uuid.NewString()}
	now := time.Now()
	ok, err := acquireScript.Run(ctx, s.rdb, []string{sl.key}, now.UnixMilli(), now.Add(SlotTTL).UnixMilli(),
		s.perUser, sl.member, (2 * SlotTTL).Milliseconds()).Int()
	if err != nil || ok == 0 {
		s.open.Add(-1)
		if err == nil {
			err = ErrUserStreams
		}
		return nil, err
	}
	return sl, nil
}

// Renew keeps the slot for another SlotTTL.
func (sl *Slot) Renew(ctx context.Context) error {
	return sl.s.rdb.ZAddXX(ctx, sl.key, redis.Z{Score: float64(time.Now().Add(SlotTTL).UnixMilli()), Member: sl.member}).Err()
}

// Release gives the slot back.
func (sl *Slot) Release(ctx context.Context) {
	sl.s.open.Add(-1)
	sl.s.rdb.ZRem(context.WithoutCancel(ctx), sl.key, sl.member)
}

// String names the slot in logs.
func (sl *Slot) String() string {
	return sl.key + "/" + sl.member + " (" + strconv.FormatInt(sl.s.Open(), 10) + " open)"
}
