package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// takeScript is GCRA that hands out up to n whole tokens at once. The
// theoretical arrival time (tat) of the next token is kept in KEYS[1]; up to
// burst tokens accrue while nobody takes them. It answers {taken, wait}:
// wait (seconds, as text) is how long until the next token when none was
// available.
//
// redis_rate's AllowAtMost does the same but charges a fractional token when
// fewer than n are left while reporting only the whole ones, so a caller
// asking for many tokens at a time would lose part of its rate.
var takeScript = redis.NewScript(`
redis.replicate_commands()
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + t[2] / 1000000
local tat = tonumber(redis.call("GET", KEYS[1]) or now)
if tat < now then tat = now end
local avail = math.floor((now - (tat - burst * interval)) / interval + 1e-9)
if avail < 1 then
  return {0, tostring(tat - burst * interval + interval - now)}
end
local take = math.min(avail, n)
local nt = tat + take * interval
redis.call("SET", KEYS[1], tostring(nt), "PX", math.ceil((nt - now) * 1000) + 1000)
return {take, "0"}
`)

// Take takes up to n tokens of key's allowance of perSecond per second,
// across every process sharing Redis, without waiting. Up to burst tokens
// accrue while nobody takes them. When none is available it returns 0 and
// how long until the next one: the caller hands its worker slot back for
// that long instead of sleeping in it.
func (l *Limiter) Take(ctx context.Context, key string, perSecond, burst, n int) (int, time.Duration, error) {
	if perSecond <= 0 || burst < 1 || n < 1 {
		return 0, 0, fmt.Errorf("ratelimit: Take needs a positive rate, burst and count")
	}
	v, err := takeScript.Run(ctx, l.rdb, []string{"wharf:take:" + key}, 1/float64(perSecond), burst, n).Slice()
	if err != nil {
		return 0, 0, err
	}
	taken, _ := v[0].(int64)
	wait, err := strconv.ParseFloat(v[1].(string), 64)
	if err != nil {
		return 0, 0, fmt.Errorf("ratelimit: bad wait %q: %w", v[1], err)
	}
	return int(taken), time.Duration(wait * float64(time.Second)), nil
}
