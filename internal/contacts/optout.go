package contacts

import (
	"context"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/phone"
	"wharf/internal/webhooks"
	"wharf/models"
)

// Marketing opt-outs (docs/CAMPAIGNS.md, Opt-outs). A contact opted out of
// marketing is not sent marketing templates (the rule is outbound's); it
// opts out or back in by a keyword (messaging reads the incoming message),
// the provider opts it out by refusing a marketing template with 131050
// (outbound tells), or a user changes it through the API. Each change
// records when, how and who, and emits contact.opted_out or
// contact.opted_in; a "change" to the state the contact is in changes and
// emits nothing.

// OptOutChange is a change of a contact's marketing opt-out.
type OptOutChange struct {
	OptOut  bool
	Source  string     // models.OptOutKeyword, OptOutProvider, OptOutUser
	UserID  *uuid.UUID // OptOutUser: who
	Keyword string     // OptOutKeyword: the word the contact sent
}

// OptOutEvent is the data of contact.opted_out and contact.opted_in.
type OptOutEvent struct {
	ContactID       uuid.UUID  `json:"contact_id"`
	PhoneNumber     string     `json:"phone_number"`
	MarketingOptOut bool       `json:"marketing_opt_out"`
	Source          string     `json:"source"`            // keyword, provider, user
	Keyword         string     `json:"keyword,omitempty"` // source keyword
	UserID          *uuid.UUID `json:"user_id,omitempty"` // source user
	At              time.Time  `json:"at"`
}

// OptOutResult is what SetOptOutIn did.
type OptOutResult struct {
	// Changed: the contact was in the other state (false too for a
	// contact not in the organization: callers check it first).
	Changed bool
	Event   uuid.UUID // the event to publish after the commit (uuid.Nil: none, or nobody listens)
}

// SetOptOutIn applies ch to the contact inside tx.
func (s *Service) SetOptOutIn(ctx context.Context, tx *gorm.DB, orgID, contactID uuid.UUID, ch OptOutChange) (OptOutResult, error) {
	now := s.now()
	var optedAt *time.Time
	if ch.OptOut {
		optedAt = &now
	}
	var changed []models.Contact
	err := tx.WithContext(ctx).Raw(`UPDATE contacts SET marketing_opt_out = ?, opted_out_at = ?, opt_out_source = ?,
		opt_out_changed_at = ?, opt_out_changed_by = ?, updated_at = now()
		WHERE organization_id = ? AND id = ? AND marketing_opt_out <> ? RETURNING *`,
		ch.OptOut, optedAt, ch.Source, now, ch.UserID, orgID, contactID, ch.OptOut).Scan(&changed).Error
	if err != nil {
		return OptOutResult{}, err
	}
	if len(changed) == 0 {
		return OptOutResult{}, nil
	}
	c := &changed[0]
	event := webhooks.EventContactOptedIn
	if ch.OptOut {
		event = webhooks.EventContactOptedOut
	}
	id, err := s.webhooks.Emit(ctx, tx, orgID, event, OptOutEvent{ContactID: c.ID, PhoneNumber: c.PhoneNumber, MarketingOptOut: ch.OptOut,
		Source: ch.Source, Keyword: ch.Keyword, UserID: ch.UserID, At: now})
	return OptOutResult{Changed: true, Event: id}, err
}

// SetOptOut is a user's change of a contact's opt-out (the API): the
// contact after it, or NotFound.
func (s *Service) SetOptOut(ctx context.Context, orgID, contactID, userID uuid.UUID, optOut bool) (*View, error) {
	var event uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.get(ctx, tx, orgID, contactID); err != nil {
			return err
		}
		r, err := s.SetOptOutIn(ctx, tx, orgID, contactID, OptOutChange{OptOut: optOut, Source: models.OptOutUser, UserID: &userID})
		event = r.Event
		return err
	})
	if err != nil {
		return nil, err
	}
	s.webhooks.Publish(ctx, orgID, event)
	return s.Get(ctx, orgID, contactID)
}

// OptOutNumber opts the number out of marketing because the provider
// refused a marketing template to it (131050). A number without a contact
// gets one (a campaign's recipients need not be contacts), so that the
// next marketing send to it is not made.
func (s *Service) OptOutNumber(ctx context.Context, orgID uuid.UUID, digits string, accountID *uuid.UUID) error {
	number := phone.FromWaID(digits)
	var events []uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		c, created, err := s.Upsert(ctx, tx, orgID, number, accountID, "", "send")
		if err != nil {
			return err
		}
		r, err := s.SetOptOutIn(ctx, tx, orgID, c.ID, OptOutChange{OptOut: true, Source: models.OptOutProvider})
		events = []uuid.UUID{created, r.Event}
		return err
	})
	if err == nil {
		s.webhooks.Publish(ctx, orgID, events...)
	}
	return err
}

// MarketingOptedOut tells whether the contact with this number (digits, as
// the provider writes it) opted out of marketing; a number without a
// contact did not.
func (s *Service) MarketingOptedOut(ctx context.Context, orgID uuid.UUID, digits string) (bool, error) {
	var out bool
	err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM contacts WHERE organization_id = ? AND phone_number = ? AND marketing_opt_out)`,
		orgID, phone.FromWaID(digits)).Scan(&out).Error
	return out, err
}

// OptedOutAmong answers which of the numbers (E.164, as stored) belong to
// contacts opted out of marketing: one query for a campaign's chunk.
func (s *Service) OptedOutAmong(ctx context.Context, orgID uuid.UUID, numbers []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(numbers) == 0 {
		return out, nil
	}
	var rows []string
	err := s.db.WithContext(ctx).Raw(`SELECT phone_number FROM contacts WHERE organization_id = ? AND phone_number IN ? AND marketing_opt_out`,
		orgID, numbers).Scan(&rows).Error
	for _, n := range rows {
		out[n] = true
	}
	return out, err
}
