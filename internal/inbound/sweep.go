package inbound

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wharf/models"
)

// sweepAge is how long an event may wait before the sweeper assumes its task
// was lost.
const sweepAge = 30 * time.Second

// Sweep enqueues processing for events left pending (a lost task), and
// deletes processed events older than three days.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	var keys []struct {
		OrganizationID, AccountID uuid.UUID
		EventType, ContactKey     string
	}
	err := s.db.WithContext(ctx).Raw(`SELECT DISTINCT organization_id, account_id, kind AS event_type, contact_key FROM inbound_events
		WHERE processed_at IS NULL AND received_at < ? LIMIT 1000`, s.now().Add(-sweepAge)).Scan(&keys).Error
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := s.enqueue(ctx, k.EventType, k.OrganizationID, k.AccountID, k.ContactKey); err != nil {
			return 0, err
		}
	}
	// Keep three days of processed events (index inbound_events_processed).
	// A failed cleanup is retried by the next sweep.
	if err := s.db.WithContext(ctx).Where("processed_at < ?", s.now().Add(-72*time.Hour)).Delete(&models.InboundEvent{}).Error; err != nil {
		s.log.Warn("cannot delete processed inbound events", "error", err)
	}
	return len(keys), nil
}
