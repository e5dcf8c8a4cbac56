package bulk

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/campaigns"
	"wharf/internal/infra/statuses"
	"wharf/internal/webhooks"
	"wharf/models"
)

// A bulk message and the Platform Messages of its sends are a projection
// of its campaign (the core rows are the truth). The submit launches the
// campaign projected (campaigns.Launch.Projected), so that each change of
// the campaign (a chunk's accepted sends, provider statuses of its
// recipients, a recount) records campaign.changed in the events outbox in
// the change's own transaction. The outbox's dispatch gives the event to
// Consume, which applies the rows as they are now: a recount's event
// brings the bulk message's status and counters up to date (sync), the
// others upsert one Outgoing Platform Message per accepted send, found by
// its provider id (message_id) and carrying its recipient
// (core_recipient_id). Dispatch is at least once and the projection only
// moves forward, so a repeated or late event changes nothing; a status that
// reached a recipient before its document existed is in the row the
// document is made from. A retry of the failed recipients resets their
// rows: its event carries their sends as they were (Change.Retried).

// PlatformMessage is the integration base's DocType of messages
// (internal/integration/messages defines it).
const PlatformMessage = "Platform Message"

// messageStages is the status order of Platform Messages (as messages's):
// Queued (or no status yet) before the send.
var messageStages = statuses.Stages{BeforeSend: []string{"Queued", ""}}

// Consume is the projector: the bulk messages' webhooks.Subscriber.
func (s *Service) Consume(ctx context.Context, orgID uuid.UUID, event string, data []byte) error {
	if event != webhooks.EventCampaignChanged {
		return nil
	}
	var ch campaigns.Change
	if err := json.Unmarshal(data, &ch); err != nil || ch.CampaignID == uuid.Nil {
		s.log.Error("wharfbulk: a campaign.changed event without a campaign", "data", string(data), "error", err)
		return nil
	}
	name, cancelled, err := s.bulkFor(ctx, orgID, ch.CampaignID)
	if err != nil || name == "" {
		return err
	}
	if ch.Counted && !cancelled { // a cancelled bulk message stays Cancelled
		if _, err := s.sync(ctx, orgID, name, ch.CampaignID); err != nil {
			return err
		}
	}
	return s.projectSends(ctx, orgID, name, ch)
}

var _ webhooks.Subscriber = (*Service)(nil)

// projectSends upserts the Platform Messages of the sends ch names, from
// the campaign's recipients as they are now. The bulk message's row is
// locked meanwhile: two events of the same sends never both insert.
func (s *Service) projectSends(ctx context.Context, orgID uuid.UUID, name string, ch campaigns.Change) error {
	sends, err := s.campaigns.Sends(ctx, orgID, ch.CampaignID, ch.RecipientIDs, ch.MessageIDs)
	if err != nil {
		return err
	}
	// The sends a retry reset are no row's any more: the event carries them.
	sends = append(sends, ch.Retried...)
	if len(sends) == 0 {
		return nil
	}
	pids := make([]string, len(sends))
	for i, m := range sends {
		pids[i] = m.PlatformMessageID
	}
	var publish []func(context.Context)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		publish = nil
		if _, err := s.frame.LockDoc(ctx, tx, orgID, BulkMessage, name); err != nil {
			return err
		}
		names, err := s.frame.NamesBy(ctx, tx, orgID, PlatformMessage, "message_id", pids)
		if err != nil {
			return err
		}
		for _, m := range sends {
			status, errText := sendStatus(m)
			if doc := names[m.PlatformMessageID]; doc != "" {
				// Locked, as the status consumer locks it (messages): a
				// status computed here is not overtaken before it is written.
				d, err := s.frame.LockDoc(ctx, tx, orgID, PlatformMessage, doc)
				if err != nil {
					return err
				}
				change := map[string]any{}
				if cur, _ := d.Get("status").(string); messageStages.Forward(cur, status) {
					change["status"] = status
					if status == string(models.StatusFailed) {
						change["error"] = errText
					}
				}
				if len(change) == 0 {
					continue
				}
				_, fn, err := s.frame.UpdateDocIn(ctx, tx, orgID, system.Email, PlatformMessage, doc, change)
				if err != nil {
					return err
				}
				publish = append(publish, fn)
				continue
			}
			in := map[string]any{"type": "Outgoing", "to": m.PhoneNumber, "message_type": "Template", "content_type": "template",
				"bulk_message": name, "message_id": m.PlatformMessageID, "status": status, "core_recipient_id": m.RecipientID.String()}
			if status == string(models.StatusFailed) {
				in["error"] = errText
			}
			d, fn, err := s.frame.InsertProjectionIn(ctx, tx, orgID, system.Email, PlatformMessage, in)
			if err != nil {
				return err
			}
			names[m.PlatformMessageID] = d.Name
			publish = append(publish, fn)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, fn := range publish {
		fn(ctx)
	}
	return nil
}

// sendStatus is the Platform Message status of an accepted send, and its
// error when it failed: the recipient's status, sent while nothing more is
// known.
func sendStatus(m campaigns.Send) (status, errText string) {
	switch st := string(m.Status); st {
	case string(models.StatusSent), string(models.StatusDelivered), string(models.StatusRead):
		return st, ""
	case string(models.StatusFailed):
		errText = m.ErrorTitle
		if m.ErrorDetail != "" {
			errText = m.ErrorTitle + ": " + m.ErrorDetail
		}
		return st, errText
	}
	return string(models.StatusSent), ""
}
