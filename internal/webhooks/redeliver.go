package webhooks

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// Redeliver sends the event of one logged delivery to its webhook again,
// now, and logs the attempt as a redelivery: the admin's answer to an
// endpoint that was down or refused it. The request is the event as it was
// (same body, same X-Webhook-ID, signed with the webhook's secret as it is
// now), so a receiver that drops duplicates by X-Webhook-ID drops it if it
// had it after all. No retries follow a failed redelivery.
//
// Refused: a delivery of another webhook or organization (not found), an
// inactive webhook, a test event (Send test makes a new one), and an event
// past the outbox's 7 days.
func (s *Service) Redeliver(ctx context.Context, orgID, webhookID uuid.UUID, deliveryID int64) (*models.WebhookDelivery, error) {
	w, err := s.get(ctx, s.db, orgID, webhookID)
	if err != nil {
		return nil, err
	}
	var d models.WebhookDelivery
	err = s.db.WithContext(ctx).Where("organization_id = ? AND webhook_id = ?", orgID, webhookID).Take(&d, "id = ?", deliveryID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.NotFoundf("delivery not found")
	}
	if err != nil {
		return nil, err
	}
	if !w.IsActive {
		return nil, apperr.Conflictf("the webhook is inactive: activate it to redeliver")
	}
	if d.Event == EventTest || d.EventID == nil {
		return nil, apperr.Conflictf("a test event is not redelivered: use Send test")
	}
	var ev models.Event
	err = s.db.WithContext(ctx).Where("organization_id = ?", orgID).Take(&ev, "id = ?", *d.EventID).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.Conflictf("the event is no longer kept (events are kept 7 days after their delivery)")
	}
	if err != nil {
		return nil, err
	}
	payload, err := body(ev.Event, ev.CreatedAt, ev.Data)
	if err != nil {
		return nil, err
	}
	var last int
	if err := s.db.WithContext(ctx).Model(&models.WebhookDelivery{}).Where("webhook_id = ? AND event_id = ?", w.ID, ev.ID).
		Select("COALESCE(max(attempt), 0)").Scan(&last).Error; err != nil {
		return nil, err
	}
	r := s.post(ctx, w, ev.ID, ev.Event, payload)
	s.metrics.WebhookDelivery(outcome(r, MaxAttempts), r.Duration)
	return s.record(ctx, w, attempt{eventID: &ev.ID, event: ev.Event, number: last + 1, payload: payload, redelivery: true}, r), nil
}
