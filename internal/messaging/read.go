package messaging

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/models"
	"wharf/platform"
)

// MarkRead marks an incoming message as read at the provider and here.
func (s *Service) MarkRead(ctx context.Context, orgID, id uuid.UUID) error {
	m, err := s.Get(ctx, orgID, id)
	if err != nil {
		return err
	}
	if m.Direction != models.DirectionIncoming || m.PlatformMessageID == nil {
		return apperr.Invalidf("only incoming messages can be marked as read")
	}
	if m.Status == models.StatusRead {
		return nil
	}
	if m.AccountID == nil {
		return apperr.Invalidf("the message's account was disconnected")
	}
	a, err := s.accounts.Get(ctx, orgID, *m.AccountID)
	if err != nil {
		return err
	}
	if err := s.provider.MarkRead(ctx, a.Creds(), *m.PlatformMessageID); err != nil {
		if platform.ClassOf(err) == platform.Permanent {
			return apperr.Invalidf("the provider refused: %v", err)
		}
		return apperr.Upstreamf("the provider failed: %v", err)
	}
	now := s.now()
	return s.db.WithContext(ctx).Model(&models.Message{}).Where("id = ?", m.ID).
		Updates(map[string]any{"status": models.StatusRead, "read_at": now, "updated_at": now}).Error
}
