package campaigns

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/metrics"
	"wharf/internal/outbound"
	"wharf/jobs"
	"wharf/models"
)

// Lane tuning.
const (
	statusCheckEvery = 250 * time.Millisecond // how soon a lane notices a pause
	// maxAttempts is how many real send failures (provider trouble) a
	// recipient gets before it fails. Throttles and waits are not attempts.
	maxAttempts = 5
	// pacedLanes is how many lanes a paced campaign runs: one keeps the pace
	// (it sends what accrued since its last run, concurrently); the second
	// takes over while the first is between runs or lost with its worker.
	// The account's budget (internal/outbound) holds one second's worth:
	// a lane that finds no token hands its slot back until the next one is
	// due, and asynq brings it back up to about 1.3 s later (delayed tasks
	// have whole-second scores, moved every 250 ms); the second lane, out
	// of step with the first, takes what accrued meanwhile.
	pacedLanes = 2
	// maxSendsAtOnce bounds the concurrent provider calls of one lane.
	maxSendsAtOnce = 16
	// sliceLength is how long an unpaced lane keeps its worker slot before
	// it looks whether other lanes starve for one: when the oldest waiting
	// lane has waited starveAfter, it hands its slot over.
	sliceLength = 2 * time.Second
	starveAfter = time.Second
	// runCacheTTL is how long a worker process trusts what it loaded about a
	// run (account credentials, template) before loading it again.
	runCacheTTL = 30 * time.Second
)

// CallbackPrefix marks campaign recipients in biz_opaque_callback_data (the
// messaging domain uses bare message ids).
const CallbackPrefix = "r:"

// run is what a lane needs for one campaign run.
type run struct {
	campaign *models.Campaign
	account  *accounts.Account
	tmpl     *models.Template
	rate     int // messages per second; 0: no pace of ours
}

// cachedRun is a run loaded by this process.
type cachedRun struct {
	generation int
	loadedAt   time.Time
	run        *run
	// checked is when a lane of this process last saw the run current
	// (unix nanoseconds): the lanes share the status check.
	checked atomic.Int64
}

// RunLane is the campaign:lane job. It sends to pending recipients until none
// is left, the campaign stops (pause, cancel) or a newer run takes over, or
// ctx ends (worker shutdown: the task goes back to the queue).
//
// A lane never holds its worker slot while it waits. A paced campaign takes
// what its account's budget accrued (outbound.Sender.Take: a budget in
// Redis shared by every worker and every kind of send, campaigns taking
// only what replies and API sends leave), sends that many recipients at
// once and, when no token is left,
// returns a jobs.RateLimited with the time until the next token: asynq
// re-enqueues it without counting a failure and the slot serves other
// campaigns meanwhile. An unpaced lane sends maxSendsAtOnce recipients at a
// time and hands its slot over when other lanes starve for one.
func (s *Service) RunLane(ctx context.Context, orgID, campaignID uuid.UUID, generation int) error {
	cr, err := s.loadRun(ctx, orgID, campaignID, generation)
	if err != nil {
		return dbWait(err)
	}
	if cr == nil {
		return nil
	}
	r := cr.run
	started := time.Now()
	tokens := 0 // sends the pace allows now (paced campaigns)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := maxSendsAtOnce
		if r.rate > 0 {
			if tokens == 0 {
				got, wait, err := s.sender.Take(ctx, &r.account.PlatformAccount, outbound.Campaign, r.rate)
				if err != nil {
					return err
				}
				if got == 0 {
					s.metrics.CampaignWait(metrics.WaitPace, wait)
					return &jobs.RateLimited{RetryAfter: wait, Reason: "waiting for the messaging tier's pace"}
				}
				tokens = got
			}
			n = tokens
		} else if time.Since(started) > sliceLength {
			if s.othersStarve() {
				s.metrics.CampaignWait(metrics.WaitSlotHandover, 0)
				return &jobs.RateLimited{RetryAfter: time.Millisecond, Reason: "handing the worker slot to other campaigns"}
			}
			started = time.Now()
		}
		if time.Since(time.Unix(0, cr.checked.Load())) >= statusCheckEvery {
			running, err := s.stillRunning(ctx, r, generation)
			if err != nil || !running {
				return err
			}
			cr.checked.Store(time.Now().UnixNano())
		}
		out, err := s.sendChunk(ctx, r, n)
		if out.claimed > 0 {
			s.RequestRecount(ctx, orgID, campaignID)
		}
		tokens = max(tokens-out.claimed, 0)
		switch {
		case err != nil:
			return err
		case out.stop != "":
			s.autoPause(ctx, r, out.stop)
			return nil
		case out.claimed == 0:
			s.runs.Delete(campaignID)
			s.RequestRecount(ctx, orgID, campaignID)
			return nil
		case out.wait > 0:
			s.metrics.CampaignWait(out.waitKind, out.wait)
			return &jobs.RateLimited{RetryAfter: out.wait, Reason: out.waitReason}
		}
	}
}

// othersStarve reports whether campaign lanes have waited starveAfter for
// a worker slot.
func (s *Service) othersStarve() bool {
	d, err := s.enq.Latency(jobs.QueueCampaigns)
	return err == nil && d >= starveAfter
}

// loadRun returns the run, from this process's cache when it is recent.
func (s *Service) loadRun(ctx context.Context, orgID, id uuid.UUID, generation int) (*cachedRun, error) {
	if v, ok := s.runs.Load(id); ok {
		c := v.(*cachedRun)
		if c.generation == generation && time.Since(c.loadedAt) < runCacheTTL {
			return c, nil
		}
	}
	r, err := s.prepare(ctx, orgID, id, generation)
	if err != nil || r == nil {
		return nil, err
	}
	c := &cachedRun{generation: generation, loadedAt: time.Now(), run: r}
	s.runs.Store(id, c)
	return c, nil
}

// prepare loads what the run needs, or returns nil when the lane has nothing
// to do (the campaign stopped or a newer run exists). A campaign whose
// account or template stopped being usable is paused with the reason.
func (s *Service) prepare(ctx context.Context, orgID, id uuid.UUID, generation int) (*run, error) {
	c, err := s.Get(ctx, orgID, id)
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if c.Status != models.CampaignSending || c.RunGeneration != generation {
		return nil, nil
	}
	if err := s.checkReady(ctx, c); err != nil {
		if apperr.KindOf(err) == apperr.Internal {
			return nil, err
		}
		s.autoPause(ctx, &run{campaign: c}, err.Error())
		return nil, nil
	}
	a, err := s.accounts.Get(ctx, orgID, *c.AccountID)
	if err != nil {
		return nil, err
	}
	t, err := s.templates.Sendable(ctx, orgID, c.AccountID, c.TemplateID, "")
	if err != nil {
		return nil, err
	}
	return &run{campaign: c, account: a, tmpl: t, rate: accounts.Rate(&a.PlatformAccount)}, nil
}

// stillRunning reports whether the lane's run is current: the campaign is
// sending and no newer run took over. A campaign whose account stopped
// being active (the provider refused it on some other send: outbound marks
// it) is paused here, with the account's reason.
func (s *Service) stillRunning(ctx context.Context, r *run, generation int) (bool, error) {
	c := r.campaign
	var cur struct {
		Status        models.CampaignStatus
		RunGeneration int
		AccountStatus *string
		LastError     string
	}
	err := s.retryDB(ctx, "check the campaign's status", func(ctx context.Context) error {
		cur.Status = ""
		return s.db.WithContext(ctx).Raw(`SELECT c.status, c.run_generation, a.status AS account_status, COALESCE(a.last_error, '') AS last_error
			FROM campaigns c LEFT JOIN platform_accounts a ON a.id = c.account_id AND a.organization_id = c.organization_id
			WHERE c.id = ? AND c.organization_id = ?`, c.ID, c.OrganizationID).Scan(&cur).Error
	})
	running := cur.Status == models.CampaignSending && cur.RunGeneration == generation
	if err != nil || !running {
		return false, err
	}
	if cur.AccountStatus == nil || *cur.AccountStatus != models.AccountActive {
		reason := "the campaign's account is not active"
		if cur.LastError != "" {
			reason = cur.LastError
		}
		s.autoPause(ctx, r, reason)
		return false, nil
	}
	return true, nil
}

// autoPause pauses a sending campaign that cannot go on, with the reason for
// the admin. An account the provider refused was marked disconnected by the
// outbound sender with the same reason.
func (s *Service) autoPause(ctx context.Context, r *run, reason string) {
	c := r.campaign
	s.runs.Delete(c.ID)
	ctx = context.WithoutCancel(ctx)
	_, err := s.transition(ctx, c.OrganizationID, c.ID, []models.CampaignStatus{models.CampaignSending}, "pause",
		map[string]any{"status": models.CampaignPaused, "paused_at": s.now(), "pause_reason": apperr.Clip(reason, 500)})
	switch {
	case err == nil:
		s.log.Warn("campaign paused", "campaign_id", c.ID, "reason", reason)
	case !apperr.Is(err, apperr.Conflict): // a conflict: another lane paused it first
		s.log.Error("cannot pause the campaign", "campaign_id", c.ID, "error", err)
	}
}
