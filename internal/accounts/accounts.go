// Package accounts owns the organization's connected platform accounts
// (business phone numbers): their credentials, encrypted at rest, what the
// provider reports about them, and onboarding through embedded signup.
//
// An account is an organization's claim on a phone number. Any organization
// may claim any number, but a claim owns the number (receives its inbound
// webhooks, template updates included) only once verified: once the provider
// has answered for that number with the claim's token, or embedded signup
// has proven access to it. A number has at most one owner; a claim that is
// not verified never blocks another organization, and the owner's
// verification disconnects it. The owner keeps the number until its
// account is deleted, even while its token fails.
package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/apperr"
	"wharf/internal/orgsettings"
	"wharf/internal/secrets"
	"wharf/internal/tenant"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// Service manages accounts.
type Service struct {
	db       *gorm.DB
	box      *secrets.Box
	provider *platform.Client
	settings *orgsettings.Service
	enq      *jobs.Enqueuer
	log      *slog.Logger
	now      func() time.Time
}

// NewService wires the accounts domain.
func NewService(db *gorm.DB, box *secrets.Box, provider *platform.Client, settings *orgsettings.Service, enq *jobs.Enqueuer, log *slog.Logger) *Service {
	return &Service{db: db, box: box, provider: provider, settings: settings, enq: enq, log: log,
		now: func() time.Time { return time.Now().UTC() }}
}

// Account is an account with its decrypted access token (for the single
// fetch the spec describes, and for calls to the provider).
type Account struct {
	models.PlatformAccount
	AccessToken string
}

// Creds returns the provider credentials of the account.
func (a *Account) Creds() platform.Creds {
	return platform.Creds{AccessToken: a.AccessToken, PhoneNumberID: a.PhoneNumberID, BusinessAccountID: a.BusinessAccountID}
}

func (s *Service) open(row models.PlatformAccount) (*Account, error) {
	token, err := s.box.OpenString(row.AccessTokenEnc)
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", row.ID, err)
	}
	return &Account{PlatformAccount: row, AccessToken: token}, nil
}

// List returns the organization's accounts.
func (s *Service) List(ctx context.Context, orgID uuid.UUID) ([]models.PlatformAccount, error) {
	var out []models.PlatformAccount
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Order("created_at").Find(&out).Error
	return out, err
}

// Get returns one account with its token.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*Account, error) {
	var row models.PlatformAccount
	if err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Take(&row, "id = ?", id).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.NotFoundf("account not found")
		}
		return nil, err
	}
	return s.open(row)
}

// ByName returns the account with this name (case-insensitive).
func (s *Service) ByName(ctx context.Context, orgID uuid.UUID, name string) (*Account, error) {
	var row models.PlatformAccount
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("lower(name) = lower(?)", strings.TrimSpace(name)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, apperr.Invalidf("no account named %q", name)
	}
	if err != nil {
		return nil, err
	}
	return s.open(row)
}

// ForSending picks the account to send from: the named one, else the given
// one (a contact's account), else the organization's oldest active account.
// The account must be active.
func (s *Service) ForSending(ctx context.Context, orgID uuid.UUID, name string, preferred *uuid.UUID) (*Account, error) {
	var a *Account
	var err error
	switch {
	case strings.TrimSpace(name) != "":
		a, err = s.ByName(ctx, orgID, name)
	case preferred != nil:
		a, err = s.Get(ctx, orgID, *preferred)
		if apperr.Is(err, apperr.NotFound) {
			return s.ForSending(ctx, orgID, "", nil)
		}
	default:
		var row models.PlatformAccount
		err = s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("status = ?", models.AccountActive).Order("created_at").Take(&row).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.Invalidf("the organization has no active account to send from")
		}
		if err == nil {
			a, err = s.open(row)
		}
	}
	if err != nil {
		return nil, err
	}
	if a.Status != models.AccountActive {
		return nil, apperr.Invalidf("account %q is %s, not active", a.Name, a.Status)
	}
	return a, nil
}

// Input creates or updates an account; nil fields are unchanged.
type Input struct {
	Name               *string
	PhoneNumberID      *string
	BusinessAccountID  *string
	AccessToken        *string
	WebhookVerifyToken *string
	// MessagingTier overrides the tier that paces campaigns ("" clears it).
	MessagingTier *string
}

// Tiers are the accepted tier overrides.
var Tiers = []string{"TIER_50", "TIER_250", "TIER_1K", "TIER_2K", "TIER_10K", "TIER_100K", "TIER_UNLIMITED"}

var providerID = regexp.MustCompile(`^[0-9]{1,32}$`)

// Create connects an account by hand. It starts pending, as an unverified
// claim; the account:refresh job reads its details from the provider and
// verifies it and makes it active when its token works. A number another
// organization owns is refused (409): that verification could never succeed.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in Input) (*Account, error) {
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", in.Name}, {"phone_number_id", in.PhoneNumberID}, {"business_account_id", in.BusinessAccountID}, {"access_token", in.AccessToken}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			return nil, apperr.Invalidf("%s is required", f.name)
		}
	}
	if !providerID.MatchString(*in.PhoneNumberID) || !providerID.MatchString(*in.BusinessAccountID) {
		return nil, apperr.Invalidf("phone_number_id and business_account_id must be the provider's numeric ids")
	}
	verify := ""
	if in.WebhookVerifyToken != nil {
		verify = strings.TrimSpace(*in.WebhookVerifyToken)
	}
	if verify == "" {
		verify = randomHex(16)
	}
	enc, err := s.box.SealString(strings.TrimSpace(*in.AccessToken))
	if err != nil {
		return nil, err
	}
	row := models.PlatformAccount{OrganizationID: orgID, Name: strings.TrimSpace(*in.Name), PhoneNumberID: *in.PhoneNumberID,
		BusinessAccountID: *in.BusinessAccountID, AccessTokenEnc: enc, WebhookVerifyToken: verify, Status: models.AccountPending}
	err = s.withNumber(ctx, orgID, row.PhoneNumberID, func(tx *gorm.DB) error { return insert(tx, &row) })
	if err != nil {
		return nil, err
	}
	s.enqueueRefresh(ctx, orgID, row.ID)
	return s.open(row)
}

// insert creates the row in a nested transaction (a savepoint inside
// withNumber), so that a caller may retry after a conflict.
func insert(db *gorm.DB, row *models.PlatformAccount) error {
	if len([]rune(row.Name)) > 100 {
		return apperr.Invalidf("name must be at most 100 characters")
	}
	err := db.Transaction(func(tx *gorm.DB) error { return tx.Create(row).Error })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return apperr.Conflictf("the organization already has an account with this name or phone number id")
	}
	return err
}

// msgOwnedElsewhere answers a claim on a number another organization owns.
// It names no organization.
const msgOwnedElsewhere = "this phone number is connected to another organization"

// msgTakenOver is the last_error of a claim that lost its number to another
// organization's verification.
const msgTakenOver = "another organization verified this phone number"

// withNumber runs fn in a transaction holding the phone number's advisory
// lock, after checking that no other organization owns the number (409, and
// fn does not run). Every change of a number's owner, and every provider
// call that acts on a number for an organization (subscribing the app to its
// business account, registering it), runs inside, so that two organizations
// cannot both pass the check. The transaction may thus wait for one provider
// call: only during onboarding, bounded by the provider client's timeout.
func (s *Service) withNumber(ctx context.Context, orgID uuid.UUID, phoneID string, fn func(tx *gorm.DB) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, "phone_number_id/"+phoneID).Error; err != nil {
			return err
		}
		var owned bool
		err := tx.Raw(`SELECT EXISTS (SELECT 1 FROM platform_accounts
			WHERE phone_number_id = ? AND verified_at IS NOT NULL AND organization_id <> ?)`, phoneID, orgID).Scan(&owned).Error
		if err != nil {
			return err
		}
		if owned {
			return apperr.Conflictf(msgOwnedElsewhere)
		}
		return fn(tx)
	})
}

// verify applies updates to the account and makes it the owner of its
// number; the other organizations' unverified claims on the number become
// disconnected, saying why. It runs inside withNumber.
func (s *Service) verify(tx *gorm.DB, a *models.PlatformAccount, updates map[string]any) error {
	now := s.now()
	updates["verified_at"] = gorm.Expr("COALESCE(verified_at, ?)", now)
	updates["updated_at"] = now
	res := tx.Model(&models.PlatformAccount{}).Where("id = ?", a.ID).Updates(updates)
	if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
		// The owner index; withNumber's check makes this unreachable.
		return apperr.Conflictf(msgOwnedElsewhere)
	}
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("account not found")
	}
	return tx.Model(&models.PlatformAccount{}).
		Where("phone_number_id = ? AND organization_id <> ? AND verified_at IS NULL AND (status <> ? OR last_error <> ?)",
			a.PhoneNumberID, a.OrganizationID, models.AccountDisconnected, msgTakenOver).
		Updates(map[string]any{"status": models.AccountDisconnected, "last_error": msgTakenOver, "updated_at": now}).Error
}

func (s *Service) enqueueRefresh(ctx context.Context, orgID, id uuid.UUID) {
	if _, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.AccountRefresh{OrganizationID: orgID, AccountID: id}); err != nil {
		s.log.Warn("cannot enqueue account refresh", "account_id", id, "error", err)
	}
}

// Update changes the name, token or verify token.
func (s *Service) Update(ctx context.Context, orgID, id uuid.UUID, in Input) (*Account, error) {
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	updates := map[string]any{"updated_at": s.now()}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" || len([]rune(name)) > 100 {
			return nil, apperr.Invalidf("name must be 1 to 100 characters")
		}
		updates["name"] = name
	}
	tokenChanged := false
	if in.AccessToken != nil && strings.TrimSpace(*in.AccessToken) != "" {
		enc, err := s.box.SealString(strings.TrimSpace(*in.AccessToken))
		if err != nil {
			return nil, err
		}
		updates["access_token_enc"] = enc
		tokenChanged = true
	}
	if in.WebhookVerifyToken != nil && strings.TrimSpace(*in.WebhookVerifyToken) != "" {
		updates["webhook_verify_token"] = strings.TrimSpace(*in.WebhookVerifyToken)
	}
	if in.PhoneNumberID != nil || in.BusinessAccountID != nil {
		return nil, apperr.Invalidf("phone_number_id and business_account_id cannot change: connect a new account instead")
	}
	if in.MessagingTier != nil {
		tier := strings.ToUpper(strings.TrimSpace(*in.MessagingTier))
		if tier != "" && !slices.Contains(Tiers, tier) {
			return nil, apperr.Invalidf("messaging_tier must be one of %s, or empty to use the provider's", strings.Join(Tiers, ", "))
		}
		updates["messaging_tier_override"] = tier
	}
	err = s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Where("id = ?", a.ID).Updates(updates).Error
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, apperr.Conflictf("an account with this name already exists")
	}
	if err != nil {
		return nil, err
	}
	if tokenChanged {
		s.enqueueRefresh(ctx, orgID, id)
	}
	return s.Get(ctx, orgID, id)
}

// Delete disconnects an account; its contacts stay, without an account.
// Deleting the owner of a number releases the number: another
// organization's claim can then be verified.
func (s *Service) Delete(ctx context.Context, orgID, id uuid.UUID) error {
	res := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.PlatformAccount{}, "id = ?", id)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("account not found")
	}
	return nil
}

// TestResult is what POST /api/accounts/{id}/test reports.
type TestResult struct {
	Connected          bool
	PhoneNumber        string
	DisplayPhoneNumber string
	VerifiedName       string
	QualityRating      string
	Error              string
}

// Test asks the provider for the account's phone number and stores what it
// says; a working token verifies the claim. When another organization owns
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
// activate a pending account whose token works. A claim on a number another
// organization owns is not verified: it becomes disconnected with a
// last_error saying so, as the owner's verification would have left it.
func (s *Service) Refresh(ctx context.Context, orgID, id uuid.UUID) error {
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
	err = s.withNumber(ctx, orgID, a.PhoneNumberID, func(tx *gorm.DB) error { return s.verify(tx, &a.PlatformAccount, details(a, pn)) })
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

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newPIN returns a uniformly random 6-digit PIN.
func newPIN() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// Route tells the inbound webhook which organization an account belongs to
// and which app secret signs its webhooks. Only verified accounts have
// routes: an unverified claim receives nothing.
type Route struct {
	AccountID         uuid.UUID
	OrganizationID    uuid.UUID
	Name              string
	PhoneNumberID     string
	BusinessAccountID string
	AppSecret         string // the organization's provider_app_secret, "" when unset
}

// Routes finds the verified accounts behind the phone number ids and
// business account ids of a webhook. A phone number id has at most one.
func (s *Service) Routes(ctx context.Context, phoneIDs, businessIDs []string) ([]Route, error) {
	if len(phoneIDs) == 0 && len(businessIDs) == 0 {
		return nil, nil
	}
	var rows []struct {
		ID, OrganizationID   uuid.UUID
		Name, PhoneNumberID  string
		BusinessAccountID    string
		ProviderAppSecretEnc []byte
	}
	err := s.db.WithContext(ctx).Raw(`SELECT a.id, a.organization_id, a.name, a.phone_number_id, a.business_account_id,
		o.provider_app_secret_enc FROM platform_accounts a JOIN organizations o ON o.id = a.organization_id
		WHERE a.verified_at IS NOT NULL AND (a.phone_number_id IN ? OR a.business_account_id IN ?)`, append(phoneIDs, ""), append(businessIDs, "")).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]Route, len(rows))
	for i, r := range rows {
		out[i] = Route{AccountID: r.ID, OrganizationID: r.OrganizationID, Name: r.Name, PhoneNumberID: r.PhoneNumberID,
			BusinessAccountID: r.BusinessAccountID}
		if len(r.ProviderAppSecretEnc) > 0 {
			if out[i].AppSecret, err = s.box.OpenString(r.ProviderAppSecretEnc); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// HasVerifyToken reports whether some account uses this webhook verify token.
// Unverified claims count too: the handshake only echoes the provider's
// challenge to whoever configured the callback, and routes nothing.
func (s *Service) HasVerifyToken(ctx context.Context, token string) (bool, error) {
	if token == "" {
		return false, nil
	}
	var ok bool
	err := s.db.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM platform_accounts WHERE webhook_verify_token = ?)`, token).Scan(&ok).Error
	return ok, err
}
