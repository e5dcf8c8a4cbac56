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
	rl  *redis_rate.Limiter
	rdb *redis.Client
}

// New builds a limiter on rdb.
func New(rdb *redis.Client) *Limiter { return &Limiter{rl: redis_rate.NewLimiter(rdb), rdb: rdb} }

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
