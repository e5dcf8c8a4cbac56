package campaigns

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/inbound"
	"wharf/internal/infra/statuses"
	"wharf/models"
)

// recipientStatuses applies outcomes to campaign recipients: forward only
// (statuses.Stages); a recipient being sent, or whose outcome was unknown,
// moves as a message pending does (a pending recipient was not sent). A
// send whose answer was lost is found through the recipient id it put in
// the callback data (after CallbackPrefix).
var recipientStatuses = statuses.Table{
	Name: "campaign_recipients", Alias: "r",
	Stages:    statuses.Stages{BeforeSend: []string{string(models.RecipientSending), string(models.RecipientUnknown)}},
	Scope:     "r.organization_id = @org",
	Returning: "r.campaign_id",
	CallbackID: func(cb string) (uuid.UUID, bool) {
		rest, ok := strings.CutPrefix(cb, CallbackPrefix)
		if !ok {
			return uuid.Nil, false
		}
		id, err := uuid.Parse(rest)
		return id, err == nil
	},
}

// ConsumerName implements inbound.Consumer: campaigns apply the statuses
// of campaign sends.
func (s *Service) ConsumerName() string { return "campaigns" }

// ApplyStatuses is the campaigns domain's inbound.StatusConsumer: it applies
// the statuses no earlier consumer matched to campaign recipients, inside
// tx: by provider id, or, for a send whose answer was lost, by the recipient
// id in the callback data. It passes on the statuses that match no
// recipient either, and after the commit requests recounts of the touched
// campaigns. A touched projected campaign records campaign.changed in tx,
// naming the statuses' provider ids (project.go).
func (s *Service) ApplyStatuses(ctx context.Context, tx *gorm.DB, b inbound.StatusBatch) (inbound.StatusResult, error) {
	res, err := s.statuses.Apply(ctx, tx, b.OrganizationID, b.AccountID, b.Outcomes)
	if err != nil {
		return inbound.StatusResult{}, err
	}
	touched := map[uuid.UUID]bool{}
	for _, id := range res.Changed {
		touched[id] = true
	}
	orgID := b.OrganizationID
	var events []uuid.UUID
	var matched []string
	for id := range touched {
		projected, err := s.projectedCampaign(ctx, tx, orgID, id)
		if err != nil {
			return inbound.StatusResult{}, err
		}
		if !projected {
			continue
		}
		if matched == nil {
			unmatched := make(map[*statuses.Outcome]bool, len(res.Unmatched))
			for _, o := range res.Unmatched {
				unmatched[o] = true
			}
			matched = []string{}
			for _, o := range b.Outcomes {
				if !unmatched[o] {
					matched = append(matched, o.PlatformID)
				}
			}
		}
		event, err := s.recordChange(ctx, tx, orgID, Change{CampaignID: id, MessageIDs: matched})
		if err != nil {
			return inbound.StatusResult{}, err
		}
		events = append(events, event)
	}
	return inbound.StatusResult{Unmatched: res.Unmatched, AfterCommit: func(ctx context.Context) {
		for id := range touched {
			s.RequestRecount(ctx, orgID, id)
		}
		s.publishChange(ctx, orgID, events...)
	}}, nil
}
