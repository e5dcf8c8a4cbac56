package calling

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/phone"
	"wharf/models"
)

// OutgoingSetup is what a callbridge needs to place a call.
type OutgoingSetup struct {
	Settings    Setup
	To          string // the callee's number, digits only (the provider's "to")
	AccountName string
	AccountID   uuid.UUID
	ContactID   uuid.UUID
	Phone       string // the contact's number as stored
}

// LoadOutgoing reads the contact, account and settings of an outgoing call.
func (s *Service) LoadOutgoing(ctx context.Context, orgID, contactID, accountID uuid.UUID) (*OutgoingSetup, error) {
	contact, err := s.contacts.Contact(ctx, orgID, contactID)
	if err != nil {
		return nil, err
	}
	a, err := s.accounts.Get(ctx, orgID, accountID)
	if err != nil {
		return nil, err
	}
	o := &OutgoingSetup{To: phone.Digits(contact.PhoneNumber), AccountName: a.Name, AccountID: a.ID, ContactID: contact.ID,
		Phone: contact.PhoneNumber}
	o.Settings.Account = AccountCreds{AccessToken: a.AccessToken, PhoneNumberID: a.PhoneNumberID}
	if _, o.Settings.Settings, err = s.settings.Get(ctx, orgID); err != nil {
		return nil, err
	}
	return o, nil
}

// CreateOutgoing logs a business-initiated call the provider accepted to
// place (initiating), made by the agent.
func (s *Service) CreateOutgoing(ctx context.Context, orgID, agentID uuid.UUID, o *OutgoingSetup, platformCallID string) (*models.CallLog, error) {
	l := models.CallLog{OrganizationID: orgID, AccountID: &o.AccountID, PlatformAccount: o.AccountName, ContactID: &o.ContactID,
		PlatformCallID: platformCallID, CallerPhone: o.Phone, Direction: "outgoing", Status: models.CallInitiating,
		AgentID: &agentID, StartedAt: time.Now()}
	if err := s.db.WithContext(ctx).Omit("ivr_path").Create(&l).Error; err != nil {
		return nil, err
	}
	return &l, nil
}

// MarkProgress applies the provider's progress of an outgoing call:
// RINGING, then ACCEPTED (answered). False when nothing changed (late or
// repeated progress).
func (s *Service) MarkProgress(ctx context.Context, orgID, callLogID uuid.UUID, status string) (bool, error) {
	var q string
	switch status {
	case "RINGING":
		q = `UPDATE call_logs SET status = 'ringing', updated_at = now() WHERE id = ? AND organization_id = ? AND status = 'initiating'`
	case "ACCEPTED":
		q = `UPDATE call_logs SET status = 'accepted', answered_at = COALESCE(answered_at, now()), updated_at = now()
			WHERE id = ? AND organization_id = ? AND status IN ('initiating', 'ringing')`
	default:
		return false, nil
	}
	res := s.db.WithContext(ctx).Exec(q, callLogID, orgID)
	return res.RowsAffected > 0, res.Error
}

// OutgoingWait is how long an outgoing call rings before it ends unanswered.
func (s *Service) OutgoingWait() time.Duration { return s.cfg.OutgoingWait }
