// Package scheduler fires time-based work: each cron entry turns a tick into
// a job on the queue. Several scheduler replicas may run; a leader lease in
// Redis lets only one of them fire, and each job's task id is derived from
// its tick, so even a leadership hand-over at the wrong moment enqueues a
// tick's job once.
package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/robfig/cron/v3"

	"wharf/internal/infra/metrics"
	"wharf/jobs"
)

// Entry is one periodic job: Spec is a cron spec (robfig/cron syntax,
// including "@every 1h"), Job builds the payload for a tick. The domains
// declare theirs (jobs.Schedule, in their modules); app gives them all to
// New.
type Entry = jobs.Schedule

// Scheduler runs entries while it holds the leader lease.
type Scheduler struct {
	rdb     *redis.Client
	enq     *jobs.Enqueuer
	log     *slog.Logger
	metrics *metrics.Set
	entries []Entry
	ttl     time.Duration
	id      string
	leader  atomic.Bool
	// Fired counts the jobs this instance enqueued; tests read it.
	Fired atomic.Int64
}

// LeaderKey is the Redis key of the leader lease.
const LeaderKey = "wharf:scheduler:leader"

// New builds a scheduler; ttl is the lease length. m (nil: none) counts
// the ticks fired and shows whether this instance leads.
func New(rdb *redis.Client, enq *jobs.Enqueuer, log *slog.Logger, ttl time.Duration, entries []Entry, m *metrics.Set) *Scheduler {
	s := &Scheduler{rdb: rdb, enq: enq, log: log, metrics: m, entries: entries, ttl: ttl, id: uuid.NewString()}
	m.WatchLeader(s.IsLeader)
	return s
}

// IsLeader reports whether this instance currently holds the lease.
func (s *Scheduler) IsLeader() bool { return s.leader.Load() }

// Run schedules the entries and campaigns for leadership until ctx ends,
// then waits for running entries and gives the lease up.
func (s *Scheduler) Run(ctx context.Context) error {
	c := cron.New(cron.WithLocation(time.UTC))
	for _, e := range s.entries {
		e := e
		if _, err := c.AddFunc(e.Spec, func() { s.fire(ctx, e) }); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.campaign(ctx) }()
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	wg.Wait()
	s.resign()
	return nil
}

func (s *Scheduler) fire(ctx context.Context, e Entry) {
	if !s.leader.Load() {
		return
	}
	p := e.Job(time.Now().UTC())
	_, err := s.enq.Enqueue(ctx, p)
	switch {
	case errors.Is(err, jobs.ErrDuplicate):
		s.metrics.SchedulerTick(e.Name, metrics.TickDuplicate)
	case err != nil:
		s.metrics.SchedulerTick(e.Name, metrics.TickError)
		s.log.Error("scheduler cannot enqueue", "entry", e.Name, "kind", p.TaskType(), "error", err)
	default:
		s.metrics.SchedulerTick(e.Name, metrics.TickEnqueued)
		s.Fired.Add(1)
		// Every tick of every entry: debug, or it floods the log once a
		// second. Info is for leadership changes and failures.
		s.log.Debug("scheduled job enqueued", "entry", e.Name, "kind", p.TaskType())
	}
}

// renewScript extends the lease only if this instance still holds it.
var renewScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// releaseScript deletes the lease only if this instance holds it.
var releaseScript = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)

// campaign acquires or renews the lease every ttl/3.
func (s *Scheduler) campaign(ctx context.Context) {
	t := time.NewTicker(s.ttl / 3)
	defer t.Stop()
	for {
		s.tryLead(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Scheduler) tryLead(ctx context.Context) {
	ms := s.ttl.Milliseconds()
	// Renewing first also lets an instance that missed a renewal (a Redis
	// blip) take back a lease that still names it.
	n, err := renewScript.Run(ctx, s.rdb, []string{LeaderKey}, s.id, ms).Int()
	if err == nil && n == 1 {
		if !s.leader.Swap(true) {
			s.log.Info("scheduler is leader", "instance", s.id)
		}
		return
	}
	ok, err := s.rdb.SetNX(ctx, LeaderKey, s.id, s.ttl).Result()
	switch {
	case err != nil:
		if s.leader.Swap(false) {
			s.log.Warn("scheduler lost leadership", "error", err)
		}
	case ok:
		s.leader.Store(true)
		s.log.Info("scheduler is leader", "instance", s.id)
	default:
		if s.leader.Swap(false) {
			s.log.Warn("scheduler lost leadership to another instance")
		}
	}
}

func (s *Scheduler) resign() {
	if !s.leader.Swap(false) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = releaseScript.Run(ctx, s.rdb, []string{LeaderKey}, s.id).Err()
}
