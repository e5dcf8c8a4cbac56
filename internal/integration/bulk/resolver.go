package bulk

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/templates"
)

// CoreResolver resolves names against the core directly: a Platform
// Account name is a core account's name ("" is the organization's oldest
// active account, as accounts.Sender picks), a Platform Template name a
// core template's name for that account (approved first). The app resolves
// Platform Template documents through the integration's base instead (a
// Platform Template is named by a hash) and uses this for the empty account.
type CoreResolver struct {
	Accounts  *accounts.Service
	Templates *templates.Service
}

// AccountFor implements Resolver.
func (r CoreResolver) AccountFor(ctx context.Context, orgID uuid.UUID, name string) (uuid.UUID, error) {
	a, err := r.Accounts.Sender(ctx, orgID, name, nil)
	if err != nil {
		return uuid.Nil, err
	}
	return a.ID, nil
}

// TemplateFor implements Resolver.
func (r CoreResolver) TemplateFor(ctx context.Context, orgID, accountID uuid.UUID, name string) (uuid.UUID, error) {
	t, err := r.Templates.Sendable(ctx, orgID, &accountID, nil, name)
	if err != nil {
		return uuid.Nil, err
	}
	return t.ID, nil
}
