// Package ratelimit enforces request limits in Redis with GCRA (through
// go-redis/redis_rate), and counts failures in fixed windows, so that a
// limit holds across every api replica.
package ratelimit

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Limiter checks and consumes request allowances.
type Limiter struct {
	rdb *redis.Client
	rl  *redis_rate.Limiter
}

// New builds a limiter on rdb.
func New(rdb *redis.Client) *Limiter { return &Limiter{rdb: rdb, rl: redis_rate.NewLimiter(rdb)} }

// Result is the outcome of one Allow.
type Result struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Time     // when the allowance is whole again
	RetryAfter time.Duration // > 0 when not allowed
}

// AllowPerMinute consumes one request of key's allowance of perMinute requests
// per minute (burst perMinute).
func (l *Limiter) AllowPerMinute(ctx context.Context, key string, perMinute int) (Result, error) {
	res, err := l.rl.Allow(ctx, key, redis_rate.PerMinute(perMinute))
	if err != nil {
		return Result{}, err
	}
	now := time.Now()
	return Result{
		Allowed:    res.Allowed > 0,
		Limit:      perMinute,
		Remaining:  res.Remaining,
		Reset:      now.Add(res.ResetAfter),
		RetryAfter: max(res.RetryAfter, 0),
	}, nil
}

// FailureLimit allows Max failures per Window: the first failure of a key
// opens its window, and once the key has failed Max times it is blocked
// until that window ends. Unlike a request allowance, checking costs
// nothing: only failures count, so a well-behaved caller is never slowed.
type FailureLimit struct {
	Max    int
	Window time.Duration
}

// blockedScript answers the longest time left (ms) in the window of the
// keys that have used up their failures, 0 when none has.
var blockedScript = redis.NewScript(`
local wait = 0
for _, key in ipairs(KEYS) do
  local n = tonumber(redis.call("GET", key) or "0")
  if n >= tonumber(ARGV[1]) then wait = math.max(wait, redis.call("PTTL", key), 1) end
end
return wait`)

// failScript counts a failure, opening the window on the first one.
var failScript = redis.NewScript(`
local n = redis.call("INCR", KEYS[1])
if n == 1 then redis.call("PEXPIRE", KEYS[1], ARGV[1]) end
return n`)

// Blocked reports how long the keys stay blocked under lim: 0 while each
// has failures left. It counts nothing and is one round trip for any
// number of keys.
func (l *Limiter) Blocked(ctx context.Context, lim FailureLimit, keys ...string) (time.Duration, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	ms, err := blockedScript.Run(ctx, l.rdb, keys, lim.Max).Int64()
	return time.Duration(ms) * time.Millisecond, err
}

// Fail counts one failure of key and returns how many it has had in the
// current window (lim.Max means it is blocked from now on).
func (l *Limiter) Fail(ctx context.Context, lim FailureLimit, key string) (int, error) {
	return failScript.Run(ctx, l.rdb, []string{key}, lim.Window.Milliseconds()).Int()
}
