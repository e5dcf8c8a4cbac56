package templates

import (
	"context"
	"encoding/json"

	"github.com/hibiken/asynq"

	"wharf/jobs"
)

// Jobs are the templates' job handlers, which the worker registers: an
// account's sync from the provider, whose result the endpoint that waits
// for it reads.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.HandleTask(func(ctx context.Context, p jobs.TemplateSync, t *asynq.Task) error {
			res, err := s.Sync(ctx, p.OrganizationID, p.AccountID)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(res)
			_, err = t.ResultWriter().Write(b) // read by the endpoint that waits
			return err
		}),
	}
}
