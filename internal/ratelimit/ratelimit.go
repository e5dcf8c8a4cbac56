// Package ratelimit enforces request limits in Redis with GCRA (through
// go-redis/redis_rate), so that a limit holds across every api replica.
package ratelimit

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Limiter checks and consumes request allowances.
type Limiter struct {
	rl *redis_rate.Limiter
}

// New builds a limiter on rdb.
func New(rdb *redis.Client) *Limiter { return &Limiter{rl: redis_rate.NewLimiter(rdb)} }

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

// Pace waits until key may do one more thing at perSecond per second,
// evenly spaced, across every process sharing Redis. It returns early only
// when ctx ends. Waiting is the point: callers count it as neither an error
// nor a retry.
//
// The burst of 2 lets a grant that came a little late (timer and Redis
// round trip, about a millisecond) be made up by the next one; with a burst
// of 1 every late grant pushes all later ones back, which costs about 6% of
// the rate at 80 per second. The long-run rate never exceeds perSecond.
func (l *Limiter) Pace(ctx context.Context, key string, perSecond int) error {
	limit := redis_rate.Limit{Rate: perSecond, Period: time.Second, Burst: 2}
	for {
		res, err := l.rl.Allow(ctx, key, limit)
		if err != nil {
			return err
		}
		if res.Allowed > 0 {
			return nil
		}
		t := time.NewTimer(res.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
