package accounts

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// Disconnect marks an account whose sends the provider refuses for reasons
// about the account itself (an invalid token, a restriction, a payment
// issue, an unregistered number) as disconnected, with the reason for the
// admin. Nothing sends from it until it works again: a new token, or
// POST /api/accounts/{id}/test once the problem is fixed, makes it active.
func (s *Service) Disconnect(ctx context.Context, orgID, id uuid.UUID, reason string) error {
	defer s.recent.Clear() // after the change, for RecentSender
	return s.db.WithContext(ctx).Model(&models.PlatformAccount{}).
		Where("id = ? AND organization_id = ?", id, orgID).
		Updates(map[string]any{"status": models.AccountDisconnected, "last_error": apperr.Clip(reason, 500), "updated_at": s.now()}).Error
}
