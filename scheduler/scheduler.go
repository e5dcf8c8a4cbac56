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

	"wharf/internal/metrics"
	"wharf/jobs"
)

// Entry is one periodic job: Spec is a cron spec (robfig/cron syntax,
// including "@every 1h"), Job builds the payload for a tick.
type Entry struct {
	Name string
	Spec string
	Job  func(tick time.Time) jobs.Payload
}

// DefaultEntries is what the scheduler fires in production; campaignSweep
// is CAMPAIGN_SWEEP_INTERVAL.
func DefaultEntries(campaignSweep time.Duration) []Entry {
	return []Entry{
		// Scheduled campaigns start within a second or two of their time.
		{Name: "start due campaigns", Spec: "@every 1s", Job: func(t time.Time) jobs.Payload {
			return jobs.CampaignStartDue{Tick: t.Truncate(time.Second)}
		}},
		{Name: "campaign sweep", Spec: "@every " + campaignSweep.String(), Job: func(t time.Time) jobs.Payload {
			return jobs.CampaignSweep{Tick: t.Truncate(campaignSweep)}
		}},
		// Replies to campaigns arrive for 72 hours after their sends; the
		// lists show the count this keeps fresh.
		{Name: "campaign replies", Spec: "@every 5m", Job: func(t time.Time) jobs.Payload {
			return jobs.CampaignReplies{Tick: t.Truncate(5 * time.Minute)}
		}},
		{Name: "purge refresh tokens", Spec: "@every 1h", Job: func(t time.Time) jobs.Payload {
			return jobs.PurgeRefreshTokens{Tick: t.Truncate(time.Hour)}
		}},
		{Name: "purge imports", Spec: "@every 1h", Job: func(t time.Time) jobs.Payload {
			return jobs.ImportPurge{Tick: t.Truncate(time.Hour)}
		}},
		// The sweeps find work whose queue task was lost (Redis restarted
		// without persistence, a crash between commit and enqueue).
		{Name: "inbound sweep", Spec: "@every 30s", Job: func(t time.Time) jobs.Payload {
			return jobs.InboundSweep{Tick: t.Truncate(30 * time.Second)}
		}},
		{Name: "chatbot sweep", Spec: "@every 30s", Job: func(t time.Time) jobs.Payload {
			return jobs.ChatbotSweep{Tick: t.Truncate(30 * time.Second)}
		}},
		{Name: "webhook events sweep", Spec: "@every 30s", Job: func(t time.Time) jobs.Payload {
			return jobs.EventsSweep{Tick: t.Truncate(30 * time.Second)}
		}},
		// Scheduler Event notifications (All = every minute) and the sweep
		// of their send ledger, at second 0 of every minute (a minute is
		// the tick Scheduler Event schedules are evaluated at).
		{Name: "notifications", Spec: "* * * * *", Job: func(t time.Time) jobs.Payload {
			return jobs.NotifyTick{Tick: t.Truncate(time.Minute)}
		}},
		{Name: "unconfirmed sends sweep", Spec: "@every 1m", Job: func(t time.Time) jobs.Payload {
			return jobs.MessageSweep{Tick: t.Truncate(time.Minute)}
		}},
		{Name: "media fetch sweep", Spec: "@every 5m", Job: func(t time.Time) jobs.Payload {
			return jobs.MediaSweep{Tick: t.Truncate(5 * time.Minute)}
		}},
		{Name: "unsubmitted templates sweep", Spec: "@every 1m", Job: func(t time.Time) jobs.Payload {
			return jobs.WharfSweep{Tick: t.Truncate(time.Minute)}
		}},
		// DocType field indexes a lost or crashed build left missing,
		// invalid or unwanted.
		{Name: "docframe index sweep", Spec: "@every 10m", Job: func(t time.Time) jobs.Payload {
			return jobs.DocframeIndexSweep{Tick: t.Truncate(10 * time.Minute)}
		}},
	}
}

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
