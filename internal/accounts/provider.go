package accounts

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
	"wharf/platform"
)

// TestResult is what POST /api/accounts/{id}/test reports.
type TestResult struct {
	Connected          bool
	PhoneNumber        string
	DisplayPhoneNumber string
	VerifiedName       string
	QualityRating      string
	Error              string
}

// readNumber reads the phone number with the account's token and checks
// that it is one of the numbers of the business account the account names.
// Reading it proves the token's access to the number; the business
// account's list proves the pair, so that nobody receives another business
// account's template updates by naming it next to a number of their own.
func (s *Service) readNumber(ctx context.Context, cr platform.Creds) (*platform.PhoneNumber, error) {
	pn, err := s.provider.PhoneNumber(ctx, cr)
	if err != nil {
		return nil, err
	}
	phones, err := s.provider.PhoneNumbers(ctx, cr.AccessToken, cr.BusinessAccountID)
	if err != nil {
		return nil, err
	}
	for _, p := range phones {
		if p.ID == cr.PhoneNumberID {
			return pn, nil
		}
	}
	return nil, &platform.Error{Class: platform.Permanent,
		Message: fmt.Sprintf("phone number %s is not a number of business account %s", cr.PhoneNumberID, cr.BusinessAccountID)}
}

// Test asks the provider for the account's phone number and stores what it
// says; a working token verifies the claim. When another organization owns
// the number it is a 409 and nothing changes.
func (s *Service) Test(ctx context.Context, orgID, id uuid.UUID) (*TestResult, error) {
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	pn, err := s.readNumber(ctx, a.Creds())
	if err != nil {
		if _, ok := platform.AsError(err); !ok {
			return nil, err
		}
		s.markError(ctx, a, err)
		return &TestResult{Connected: false, PhoneNumber: a.PhoneNumber, Error: err.Error()}, nil
	}
	err = s.withNumber(ctx, orgID, a.PhoneNumberID, func(tx *gorm.DB) error { return s.verify(tx, &a.PlatformAccount, details(a, pn)) })
	if err != nil {
		return nil, err
	}
	return &TestResult{Connected: true, PhoneNumber: digitsOnly(pn.DisplayPhoneNumber), DisplayPhoneNumber: pn.DisplayPhoneNumber,
		VerifiedName: pn.VerifiedName, QualityRating: pn.QualityRating}, nil
}

// Refresh is the account:refresh job: read the details, and verify and
// activate a pending account whose token works (a new account, or one whose
// token changed: Update makes a disconnected account pending again). A
// claim on a number another organization owns is not verified: it becomes
// disconnected with a last_error saying so, as the owner's verification
// would have left it.
//
// A refresh never undoes a decision made after it was requested: the job
// may run late (a busy worker) or take long (the provider's answers), and
// meanwhile a send the provider refused for the account (payment,
// restriction, 131042...) may have disconnected it. So the status and
// last_error change only from what they are when the row is written: a
// pending account becomes active, and only a pending or active one has its
// last_error cleared; a disconnected one stays so, with its reason.
func (s *Service) Refresh(ctx context.Context, orgID, id uuid.UUID) error {
	defer s.recent.Clear() // after the change, for RecentSender
	a, err := s.Get(ctx, orgID, id)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	pn, err := s.readNumber(ctx, a.Creds())
	if err != nil {
		if platform.ClassOf(err) == platform.Permanent {
			s.markError(ctx, a, err)
			return nil
		}
		return err
	}
	updates := details(a, pn)
	updates["status"] = gorm.Expr("CASE WHEN status = ? THEN ? ELSE status END", models.AccountPending, models.AccountActive)
	updates["last_error"] = gorm.Expr("CASE WHEN status IN ? THEN '' ELSE last_error END", []string{models.AccountPending, models.AccountActive})
	err = s.withNumber(ctx, orgID, a.PhoneNumberID, func(tx *gorm.DB) error { return s.verify(tx, &a.PlatformAccount, updates) })
	switch {
	case apperr.Is(err, apperr.Conflict):
		return s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Where("id = ? AND verified_at IS NULL", a.ID).
			Updates(map[string]any{"status": models.AccountDisconnected, "last_error": msgTakenOver, "updated_at": s.now()}).Error
	case apperr.Is(err, apperr.NotFound):
		return nil
	}
	return err
}

// details are the updates that store what the provider reports of the
// account's number.
func details(a *Account, pn *platform.PhoneNumber) map[string]any {
	updates := map[string]any{
		"phone_number": pn.DisplayPhoneNumber, "verified_name": pn.VerifiedName, "quality_rating": pn.QualityRating,
		"messaging_limit": pn.Tier(), "platform_type": pn.PlatformType, "is_coexistence": pn.IsCoexistence(),
		"last_error": "",
	}
	// A working token makes a hand-connected account usable; accounts from
	// embedded signup become active through registration instead.
	if a.Status == models.AccountPending || a.Status == models.AccountDisconnected {
		updates["status"] = models.AccountActive
	}
	return updates
}

func (s *Service) markError(ctx context.Context, a *Account, err error) {
	defer s.recent.Clear() // after the change, for RecentSender
	updates := map[string]any{"last_error": apperr.Clip(err.Error(), 500), "updated_at": s.now()}
	if pe, ok := platform.AsError(err); ok && pe.Code == platform.CodeInvalidToken && a.Status == models.AccountActive {
		updates["status"] = models.AccountDisconnected
	}
	s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Where("id = ?", a.ID).Updates(updates)
}

func digitsOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
