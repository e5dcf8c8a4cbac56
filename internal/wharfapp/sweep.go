package wharfapp

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

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
	var rows []struct {
		OrganizationID uuid.UUID
		Name           string
	}
	now := time.Now()
	err := s.DB.WithContext(ctx).Raw(`SELECT organization_id, name FROM docframe_documents
		WHERE doctype = ? AND coalesce(data->>'template_id', '') = '' AND coalesce(data->>'status', '') = ''
		AND creation < ? AND creation > ? ORDER BY creation LIMIT ?`,
		DoctypeTemplate, now.Add(-sweepAfter), now.Add(-sweepWithin), sweepBatch).Scan(&rows).Error
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
