package worker

import (
	"github.com/hibiken/asynq"

	"wharf/jobs"
)

// Register adds the job handlers to mux: every domain's, from its module
// (app lists them). Each handler decodes its typed payload and calls one
// idempotent domain method, passing the payload's organization_id as an
// argument. A task type with two handlers is a wiring mistake: asynq's
// ServeMux panics on it.
func Register(mux *asynq.ServeMux, handlers []jobs.Handler) {
	for _, h := range handlers {
		mux.Handle(h.Type, h.Handle)
	}
}
