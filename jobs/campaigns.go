package jobs

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
)

// QueueCampaigns holds campaign lanes. The worker serves it with a pool of
// its own (CAMPAIGN_CONCURRENCY), so a campaign never occupies the slots of
// replies and inbound processing.
const QueueCampaigns = "campaigns"

// Task types of campaigns.
const (
	TypeCampaignLane     = "campaign:lane"
	TypeCampaignRecount  = "campaign:recount"
	TypeCampaignSweep    = "campaign:sweep"
	TypeCampaignStartDue = "campaign:start_due"
	TypeCampaignReplies  = "campaign:replies"
)

// CampaignLane is one send loop of a campaign run: it claims pending
// recipients one at a time until none is left or the campaign stops. The
// task id is deterministic per run generation and lane, so enqueueing the
// lanes twice starts them once.
type CampaignLane struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	CampaignID     uuid.UUID `json:"campaign_id"`
	Generation     int       `json:"generation"`
	Lane           int       `json:"lane"`
}

// TaskType implements Payload.
func (CampaignLane) TaskType() string { return TypeCampaignLane }

// Options: long-running (asynq extends the lease while it runs); a crashed
// lane is retried, and the sweeper starts fresh lanes sooner.
func (p CampaignLane) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueCampaigns), asynq.MaxRetry(5), asynq.Timeout(24 * time.Hour),
		asynq.TaskID(fmt.Sprintf("campaign-lane:%s:%d:%d", p.CampaignID, p.Generation, p.Lane))}
}

// CampaignRecount recomputes a campaign's counters from its recipients and
// completes it when nobody is pending or sending. Task ids per time bucket
// make it run at most once per interval per campaign, and always once more
// after the last change.
type CampaignRecount struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	CampaignID     uuid.UUID `json:"campaign_id"`
	Bucket         int64     `json:"bucket"` // unix milliseconds of the run time
}

// TaskType implements Payload.
func (CampaignRecount) TaskType() string { return TypeCampaignRecount }

// Options implements optioner.
func (p CampaignRecount) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueDefault), asynq.MaxRetry(3), asynq.Timeout(time.Minute),
		asynq.TaskID(fmt.Sprintf("campaign-recount:%s:%d", p.CampaignID, p.Bucket)), At(time.UnixMilli(p.Bucket))}
}

// CampaignSweep settles recipients a dead worker left sending, restarts
// stalled campaigns and completes finished ones.
type CampaignSweep sweep

// TaskType implements Payload.
func (CampaignSweep) TaskType() string { return TypeCampaignSweep }

// Options implements optioner.
func (p CampaignSweep) Options() []asynq.Option { return sweepOptions("campaign-sweep", p.Tick) }

// CampaignReplies refreshes the reply counts of the campaigns that can
// still receive replies (internal/campaigns, report.go).
type CampaignReplies sweep

// TaskType implements Payload.
func (CampaignReplies) TaskType() string { return TypeCampaignReplies }

// Options implements optioner.
func (p CampaignReplies) Options() []asynq.Option { return sweepOptions("campaign-replies", p.Tick) }

// CampaignStartDue starts the scheduled campaigns whose time has come.
type CampaignStartDue sweep

// TaskType implements Payload.
func (CampaignStartDue) TaskType() string { return TypeCampaignStartDue }

// Options: on the critical queue, so a start is never late behind bulk work.
func (p CampaignStartDue) Options() []asynq.Option {
	return []asynq.Option{asynq.Queue(QueueCritical), asynq.MaxRetry(0), asynq.Timeout(30 * time.Second),
		asynq.TaskID(fmt.Sprintf("campaign-start-due:%d", p.Tick.Unix())), asynq.Retention(time.Minute)}
}
