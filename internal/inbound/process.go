package inbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/models"
	"wharf/platform"
)

// maxAttempts is how often a failing event is retried before it is set
// aside (processed, with its error) so it cannot block the contact forever.
const maxAttempts = 5

// batchSize is how many events of one contact one transaction applies.
const batchSize = 100

// Process is the inbound:process job: apply every pending event of one
// contact of one account (messages, and the account's other ordered events
// under the empty key), oldest first.
func (s *Service) Process(ctx context.Context, orgID, accountID uuid.UUID, contactKey string) error {
	a, err := s.accounts.Get(ctx, orgID, accountID)
	if apperr.Is(err, apperr.NotFound) {
		return nil // the account was deleted with its events
	}
	if err != nil {
		return err
	}
	for {
		n, err := s.processBatch(ctx, a, contactKey)
		if err != nil || n < batchSize {
			return err
		}
	}
}

// processBatch applies up to batchSize pending events of the contact in one
// transaction, each under a savepoint. A failing event is rolled back alone
// and counted; the events after it wait (order matters) unless it has now
// failed maxAttempts times and is set aside. It returns how many events it
// looked at. The consumers' after-commit work runs for the events that
// committed, in order.
//
// A batch of one event, nearly every batch (a contact seldom has two
// messages waiting), takes no savepoint: a failure rolls the whole
// transaction back, which then held nothing else, and is counted in a
// transaction of its own (soloFailure). The savepoint was a round trip and
// a subtransaction for every incoming message.
func (s *Service) processBatch(ctx context.Context, a *accounts.Account, key string) (int, error) {
	var events, applied []models.InboundEvent
	var after []func(context.Context)
	var failure error
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		after, applied = after[:0], applied[:0]
		if err := lockContact(tx, a.ID, key); err != nil {
			return err
		}
		if err := tx.Raw(`SELECT * FROM inbound_events WHERE account_id = ? AND contact_key = ? AND processed_at IS NULL
			AND kind <> ? ORDER BY id LIMIT ?`, a.ID, key, EventStatuses, batchSize).Scan(&events).Error; err != nil {
			return err
		}
		solo := len(events) == 1
		var done []int64
		for i := range events {
			ev := &events[i]
			if !solo {
				if err := tx.SavePoint("ev").Error; err != nil {
					return err
				}
			}
			fns, err := s.applyEvent(ctx, tx, a, ev)
			if err == nil {
				after = append(after, fns...)
				done = append(done, ev.ID)
				applied = append(applied, *ev)
				continue
			}
			if solo {
				return &soloFailure{ev: *ev, err: err}
			}
			if err := tx.RollbackTo("ev").Error; err != nil {
				return err
			}
			giveUp, cerr := s.recordFailure(tx, ev, err)
			if cerr != nil {
				return cerr
			}
			if !giveUp {
				failure = err // later events of this contact wait for this one
				break
			}
		}
		if len(done) == 0 {
			return nil
		}
		return tx.Exec(`UPDATE inbound_events SET processed_at = now() WHERE id IN ?`, done).Error
	})
	var solo *soloFailure
	if errors.As(err, &solo) {
		var giveUp bool
		if giveUp, err = s.countSoloFailure(ctx, a.ID, key, solo); err == nil && !giveUp {
			failure = solo.err // later events of this contact wait for this one
		}
	}
	if err != nil {
		return 0, err
	}
	for _, ev := range applied {
		s.metrics.InboundApplied(ev.EventType, ev.ReceivedAt)
	}
	for _, fn := range after {
		fn(ctx)
	}
	if failure != nil {
		return 0, failure
	}
	return len(events), nil
}

// lockContact takes the transaction-scoped lock of one contact key of an
// account: its events are applied by one transaction at a time.
func lockContact(tx *gorm.DB, accountID uuid.UUID, key string) error {
	return tx.Exec(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, accountID.String()+"/"+key).Error
}

// soloFailure is the failure of the only event of a batch applied without
// a savepoint; returned from the transaction, it rolls it back.
type soloFailure struct {
	ev  models.InboundEvent
	err error
}

func (f *soloFailure) Error() string { return f.err.Error() }

// countSoloFailure counts a solo event's failure after its transaction
// rolled back, under the contact's lock again, unless another task has
// meanwhile applied or counted the event (its attempts moved). It answers
// whether the event is set aside.
func (s *Service) countSoloFailure(ctx context.Context, accountID uuid.UUID, key string, f *soloFailure) (bool, error) {
	var giveUp bool
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockContact(tx, accountID, key); err != nil {
			return err
		}
		var err error
		giveUp, err = s.recordFailure(tx, &f.ev, f.err)
		return err
	})
	return giveUp, err
}

// recordFailure records an event's failed attempt (and its error), setting
// the event aside when no retry can mend it or it has failed maxAttempts
// times. The update applies only to the event as it was read (pending, the
// same attempts), so an attempt is never counted twice.
func (s *Service) recordFailure(tx *gorm.DB, ev *models.InboundEvent, cause error) (bool, error) {
	s.log.Error("inbound event failed", "event_id", ev.ID, "attempt", ev.Attempts+1, "error", cause)
	giveUp := ev.Attempts+1 >= maxAttempts || errors.Is(cause, errNotASender)
	err := tx.Exec(`UPDATE inbound_events SET attempts = attempts + 1, last_error = ?,
		processed_at = CASE WHEN ? THEN now() ELSE NULL END WHERE id = ? AND processed_at IS NULL AND attempts = ?`,
		apperr.Clip(cause.Error(), 1000), giveUp, ev.ID, ev.Attempts).Error
	return giveUp, err
}

// applyEvent hands one event to its consumers and returns their
// after-commit work.
func (s *Service) applyEvent(ctx context.Context, tx *gorm.DB, a *accounts.Account, ev *models.InboundEvent) ([]func(context.Context), error) {
	if ev.EventType == EventMessages {
		var v platform.MessagesValue
		if err := json.Unmarshal(ev.Payload, &v); err != nil {
			return nil, err
		}
		return s.applyMessages(ctx, tx, a, ev.ContactKey, &v)
	}
	c := s.consumers.events[ev.EventType]
	if c == nil {
		s.log.Warn("no consumer for inbound event type", "type", ev.EventType, "event_id", ev.ID)
		return nil, nil
	}
	fn, err := c.ConsumeEvent(ctx, tx, &Event{ID: ev.ID, Type: ev.EventType, Account: a, ContactKey: ev.ContactKey, Payload: ev.Payload})
	if err != nil || fn == nil {
		return nil, err
	}
	return []func(context.Context){fn}, nil
}

// errNotASender marks messages whose sender (the provider's wa_id) is not a
// phone number: no contact is made of "" or "abc", and no retry mends them.
var errNotASender = errors.New("the sender is not a phone number; messages set aside")

// applyMessages finds or creates the sender and hands each of its messages
// to the message consumers, in order.
func (s *Service) applyMessages(ctx context.Context, tx *gorm.DB, a *accounts.Account, key string, v *platform.MessagesValue) ([]func(context.Context), error) {
	if len(v.Messages) == 0 {
		return nil, nil
	}
	if !phone.IsWaID(key) {
		return nil, errNotASender
	}
	profile := ""
	for _, c := range v.Contacts {
		if c.WaID == key {
			profile = c.Profile.Name
		}
	}
	c, created, err := s.contacts.Upsert(ctx, tx, a.OrganizationID, phone.FromWaID(key), &a.ID, profile, "incoming")
	if err != nil {
		return nil, err
	}
	var after []func(context.Context)
	if created != uuid.Nil {
		after = append(after, func(ctx context.Context) { s.webhooks.Publish(ctx, a.OrganizationID, created) })
	}
	for _, m := range v.Messages {
		in := &Incoming{Account: a, Contact: c, Message: m}
		for _, mc := range s.consumers.messages {
			res, err := mc.ConsumeMessage(ctx, tx, in)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", mc.ConsumerName(), err)
			}
			if res.AfterCommit != nil {
				after = append(after, res.AfterCommit)
			}
			if res.Stored != uuid.Nil {
				in.MessageID = res.Stored
			}
			in.Answered = in.Answered || res.Answered
			if res.Seen {
				break
			}
		}
	}
	return after, nil
}
