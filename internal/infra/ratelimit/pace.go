package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// paceScript is takeScript with two changes for a budget shared by senders
// of different priorities (internal/outbound):
//
//   - a budget nobody drew from for idle (a new key, or one that expired)
//     starts with one token for its first caller (above that caller's
//     reserve), not full: the first second of a run of sends is no faster
//     than the rate;
//   - a caller takes only what is left above its reserve: a send of lower
//     priority leaves the last tokens to the higher ones, which so never
//     wait for it longer than one interval.
//
// KEYS[1] holds the theoretical arrival time (tat) of the next token.
// ARGV: interval (s), burst, n, reserve, idle (ms). It answers {taken,
// wait}: wait (seconds, as text) is how long until a token above the
// reserve when none was.
var paceScript = redis.NewScript(`
redis.replicate_commands()
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local reserve = tonumber(ARGV[4])
local idle = tonumber(ARGV[5])
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + t[2] / 1000000
local stored = redis.call("GET", KEYS[1])
local tat
if stored then
  tat = tonumber(stored)
  if tat < now then tat = now end
else
  tat = now + (burst - 1 - reserve) * interval
  redis.call("SET", KEYS[1], tostring(tat), "PX", math.ceil((tat - now) * 1000) + idle)
end
local avail = math.floor((now - (tat - burst * interval)) / interval + 1e-9)
local usable = avail - reserve
if usable < 1 then
  return {0, tostring(tat - burst * interval + (reserve + 1) * interval - now)}
end
local take = math.min(usable, n)
local nt = tat + take * interval
redis.call("SET", KEYS[1], tostring(nt), "PX", math.ceil((nt - now) * 1000) + idle)
return {take, "0"}
`)

// PaceIdle is how long after its last draw a pace budget is forgotten (and
// starts again with one token). It outlasts the time a waiting campaign
// lane takes to come back (asynq moves delayed tasks with whole-second
// scores), so a lane between runs loses none of the rate.
const PaceIdle = 3 * time.Second

// Pace takes up to n tokens of key's budget of perSecond per second,
// shared by every process on Redis, leaving reserve tokens to callers of
// higher priority, without waiting. Up to burst tokens accrue while nobody
// draws; a budget idle for PaceIdle starts again with one. When no token
// above the reserve is left it returns 0 and how long until there is one.
func (l *Limiter) Pace(ctx context.Context, key string, perSecond, burst, reserve, n int) (int, time.Duration, error) {
	if perSecond <= 0 || burst < 1 || n < 1 || reserve < 0 {
		return 0, 0, fmt.Errorf("ratelimit: Pace needs a positive rate, burst and count and a reserve of at least 0")
	}
	reserve = min(reserve, burst-1)
	v, err := paceScript.Run(ctx, l.rdb, []string{"wharf:pace:" + key}, 1/float64(perSecond), burst, n, reserve,
		PaceIdle.Milliseconds()).Slice()
	if err != nil {
		return 0, 0, err
	}
	taken, _ := v[0].(int64)
	wait, err := strconv.ParseFloat(v[1].(string), 64)
	if err != nil {
		return 0, 0, fmt.Errorf("ratelimit: bad wait %q: %w", v[1], err)
	}
	return int(taken), max(time.Duration(wait*float64(time.Second)), 0), nil
}
