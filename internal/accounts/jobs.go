package accounts

import (
	"context"

	"wharf/jobs"
)

// Jobs are the accounts' job handlers, which the worker registers: the
// refresh of an account's details from the provider.
func (s *Service) Jobs() []jobs.Handler {
	return []jobs.Handler{
		jobs.Handle(func(ctx context.Context, p jobs.AccountRefresh) error {
			return s.Refresh(ctx, p.OrganizationID, p.AccountID)
		}),
	}
}
