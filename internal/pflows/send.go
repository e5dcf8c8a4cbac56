package pflows

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// Sendable answers a flow that can be sent to contacts: a PUBLISHED one.
// The provider renders drafts only to the business's own testers, and
// deprecated flows not at all.
func (s *Service) Sendable(ctx context.Context, orgID, id uuid.UUID) (*models.PlatformFlow, error) {
	f, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if f.Status != models.FlowPublished || f.ProviderFlowID == nil {
		return nil, apperr.Conflictf("only PUBLISHED flows can be sent; this one is %s", f.Status)
	}
	return f, nil
}

// BusinessAccountID answers the business account a flow lives in: a flow
// message must be sent from a number of that business account.
func (s *Service) BusinessAccountID(ctx context.Context, f *models.PlatformFlow) (string, error) {
	a, err := s.accounts.Get(ctx, f.OrganizationID, f.AccountID)
	if err != nil {
		return "", err
	}
	return a.BusinessAccountID, nil
}

// FirstScreen answers the id of the flow's first screen, where a flow
// message opens it unless told otherwise; empty when the definition has
// none.
func FirstScreen(f *models.PlatformFlow) string {
	screens, _ := f.JSONDefinition.V["screens"].([]any)
	if len(screens) == 0 {
		return ""
	}
	first, _ := screens[0].(map[string]any)
	id, _ := first["id"].(string)
	return id
}
