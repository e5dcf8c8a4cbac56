package messages

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"

	"wharf/internal/integration/docframe"
	"wharf/jobs"
)

// The submission of a Platform Template is enqueued after the document's
// commit (DocumentEvent); a crash between the two would leave the template
// unsubmitted for good. The sweep finds such templates (no template_id, no
// status) and enqueues their submission again, under a task id of the
// document so that two sweeps, or a sweep and the original task, never
// queue it twice at once (SubmitTemplate is idempotent anyway).

// sweepAfter is how old an unsubmitted template must be before the sweep
// takes it: older than any enqueue that is merely late. sweepWithin bounds
// how far back it looks (an older one was archived after its retries: the
// asynq UI shows why).
const (
	sweepAfter  = time.Minute
	sweepWithin = 7 * 24 * time.Hour
	sweepBatch  = 500
)

// SweepUnsubmitted enqueues the submission of unsubmitted Platform
// Templates and reports how many it enqueued.
func (s *Service) SweepUnsubmitted(ctx context.Context) (int, error) {
	now := time.Now()
	rows, err := s.frame.Find(ctx, nil, docframe.Filter{Doctype: DoctypeTemplate, Blank: []string{"template_id", "status"},
		CreatedBefore: now.Add(-sweepAfter), CreatedAfter: now.Add(-sweepWithin), Oldest: true, Limit: sweepBatch})
	if err != nil || s.Enqueuer == nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		_, err := s.Enqueuer.Enqueue(ctx, jobs.WharfTemplateSubmit{OrganizationID: r.OrganizationID, Name: r.Name},
			asynq.TaskID("wharf-submit:"+r.OrganizationID.String()+":"+r.Name), asynq.Retention(time.Hour))
		switch {
		case errors.Is(err, jobs.ErrDuplicate):
		case err != nil:
			return n, err
		default:
			n++
		}
	}
	if n > 0 {
		s.Log.Warn("wharfapp: re-enqueued the submission of Platform Templates whose task was lost", "templates", n)
	}
	return n, nil
}
