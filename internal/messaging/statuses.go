package messaging

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/infra/statuses"
	"wharf/internal/webhooks"
	"wharf/models"
)

// messageStatuses applies outcomes to outbound messages: forward only from
// pending (statuses.Stages). A send whose answer was lost is found
// through the message id it put in the callback data.
var messageStatuses = statuses.Table{
	Name: "messages", Alias: "m",
	Stages:    statuses.Stages{BeforeSend: []string{string(models.StatusPending)}},
	Scope:     "m.organization_id = @org AND m.account_id = @acc",
	Returning: "m.id",
	CallbackID: func(cb string) (uuid.UUID, bool) {
		id, err := uuid.Parse(cb)
		return id, err == nil
	},
}

// ApplyStatuses is the messaging domain's inbound.StatusConsumer: it
// applies a batch of provider statuses to outbound messages, inside tx, in
// a few set-based statements. Statuses of messages it does not know, even
// through the callback data a lost send leaves behind, are passed on
// (campaign sends).
//
// A changed message that a framework document projects records
// message.changed for the projector in the same transaction, all of the
// batch's in one statement; a batch with none (every ordinary message)
// writes nothing more.
func (s *Service) ApplyStatuses(ctx context.Context, tx *gorm.DB, b inbound.StatusBatch) (inbound.StatusResult, error) {
	res, err := s.statuses.Apply(ctx, tx, b.OrganizationID, b.AccountID, b.Outcomes)
	if err != nil {
		return inbound.StatusResult{}, err
	}
	events, projected, err := s.statusChanges(ctx, tx, b.OrganizationID, res.Changed, res.Reconciled)
	if err != nil {
		return inbound.StatusResult{}, err
	}
	var changes []uuid.UUID
	if len(projected) > 0 {
		data := make([]any, len(projected))
		for i, id := range projected {
			data[i] = map[string]any{"message_id": id}
		}
		if changes, err = s.webhooks.RecordMany(ctx, tx, b.OrganizationID, webhooks.EventMessageChanged, data); err != nil {
			return inbound.StatusResult{}, err
		}
	}
	// The provider's marketing opt-out (131050) marks the contact whoever
	// sent the message (a campaign's statuses pass here first).
	optOuts := s.providerOptOuts(b.OrganizationID, b.AccountID, b.All)
	out := inbound.StatusResult{Unmatched: res.Unmatched, AfterCommit: optOuts}
	if len(events) > 0 || len(changes) > 0 {
		out.AfterCommit = func(ctx context.Context) {
			if len(events) > 0 {
				s.live.Publish(ctx, b.OrganizationID, events...)
			}
			s.webhooks.Publish(ctx, b.OrganizationID, changes...)
			if optOuts != nil {
				optOuts(ctx)
			}
		}
	}
	return out, nil
}
