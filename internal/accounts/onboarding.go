package accounts

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/models"
	"wharf/platform"
)

// SignupConfig is what the embedded-signup widget needs. The app secret is
// never part of it.
type SignupConfig struct {
	AppID, ConfigID, APIVersion string
	// Configured: the app id and its secret are both set, which the code
	// exchange needs.
	Configured bool
}

// EmbeddedSignupConfig returns the organization's embedded-signup settings.
func (s *Service) EmbeddedSignupConfig(ctx context.Context, orgID uuid.UUID) (*SignupConfig, error) {
	_, st, err := s.settings.Get(ctx, orgID)
	if err != nil {
		return nil, err
	}
	secret, err := s.settings.ProviderAppSecret(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return &SignupConfig{AppID: st.ProviderAppID, ConfigID: st.ProviderConfigID, APIVersion: s.provider.Version(),
		Configured: st.ProviderAppID != "" && secret != ""}, nil
}

// ExchangeInput is the body of POST /api/accounts/exchange-token.
type ExchangeInput struct {
	Code               string
	PhoneID            string
	BusinessAccountID  string
	Name               string
	WebhookVerifyToken string
}

// Onboarded is the outcome of exchange-token or register.
type Onboarded struct {
	Account *Account
	PIN     string // set when the service registered the number
	Warning string // set when registration failed
}

// ExchangeToken completes embedded signup: it trades the code for a
// permanent token, discovers the business account and phone number when not
// given (granular scopes first, then the accounts shared with the token),
// reads the number with the token (which proves access to it), subscribes
// the app to the account's webhooks, saves the account as the number's
// verified owner and registers the number with a generated PIN, except for
// numbers still on the business mobile app (coexistence), which are active
// without registration. A number another organization owns is a 409 before
// anything is subscribed or saved; other organizations' unverified claims
// on it become disconnected.
func (s *Service) ExchangeToken(ctx context.Context, orgID uuid.UUID, in ExchangeInput) (*Onboarded, error) {
	defer s.recent.Clear() // after the change, for RecentSender
	code := strings.TrimSpace(in.Code)
	if code == "" {
		return nil, apperr.Invalidf("code is required")
	}
	_, st, err := s.settings.Get(ctx, orgID)
	if err != nil {
		return nil, err
	}
	appSecret, err := s.settings.ProviderAppSecret(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if st.ProviderAppID == "" || appSecret == "" {
		return nil, apperr.Invalidf("set provider_app_id and provider_app_secret in the organization settings first")
	}
	token, err := s.provider.ExchangeCode(ctx, st.ProviderAppID, appSecret, code)
	if err != nil {
		return nil, providerFailure("exchanging the code", err)
	}
	wabaID, phoneID := strings.TrimSpace(in.BusinessAccountID), strings.TrimSpace(in.PhoneID)
	if wabaID == "" {
		if wabaID, err = s.discoverBusinessAccount(ctx, st.ProviderAppID, appSecret, token); err != nil {
			return nil, err
		}
	}
	var pn *platform.PhoneNumber
	if phoneID == "" {
		phones, err := s.provider.PhoneNumbers(ctx, token, wabaID)
		if err != nil {
			return nil, providerFailure("listing the phone numbers", err)
		}
		if len(phones) == 0 {
			return nil, apperr.Invalidf("business account %s has no phone number", wabaID)
		}
		pn = &phones[0]
		phoneID = pn.ID
	}
	creds := platform.Creds{AccessToken: token, PhoneNumberID: phoneID, BusinessAccountID: wabaID}
	// Reading the number with the token, alone or in its business account's
	// list, proves the token's access to it.
	if pn == nil || pn.PlatformType == "" {
		if pn, err = s.readNumber(ctx, creds); err != nil {
			return nil, providerFailure("reading the phone number", err)
		}
	}
	var id uuid.UUID
	err = s.withNumber(ctx, orgID, phoneID, func(tx *gorm.DB) error {
		if err := s.provider.SubscribeApp(ctx, token, wabaID); err != nil {
			return providerFailure("subscribing to the account's webhooks", err)
		}
		row, err := s.saveOnboarded(tx, orgID, in, creds, pn)
		if err != nil {
			return err
		}
		id = row.ID
		return s.verify(tx, row, map[string]any{"last_error": ""})
	})
	if err != nil {
		return nil, err
	}
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if pn.IsCoexistence() {
		return s.activate(ctx, a)
	}
	return s.register(ctx, a, newPIN(), true)
}

func providerFailure(step string, err error) error {
	if pe, ok := platform.AsError(err); ok {
		if pe.Class == platform.Permanent {
			return apperr.Invalidf("the provider refused %s: %s", step, pe.Error())
		}
		return apperr.Upstreamf("the provider failed while %s: %s", step, pe.Error())
	}
	return err
}

func (s *Service) discoverBusinessAccount(ctx context.Context, appID, appSecret, token string) (string, error) {
	info, err := s.provider.DebugToken(ctx, appID, appSecret, token)
	if err != nil {
		return "", providerFailure("inspecting the token", err)
	}
	if ids := info.Targets("whatsapp_business_management"); len(ids) > 0 {
		return ids[0], nil
	}
	if ids := info.Targets("whatsapp_business_messaging"); len(ids) > 0 {
		return ids[0], nil
	}
	shared, err := s.provider.SharedBusinessAccounts(ctx, token)
	if err != nil {
		return "", providerFailure("looking up the shared business accounts", err)
	}
	if len(shared) == 0 {
		return "", apperr.Invalidf("the token gives access to no business account: pass business_account_id")
	}
	return shared[0].ID, nil
}

// saveOnboarded creates the account, or updates it when the organization
// re-onboards the same number (or had claimed it by hand). It runs inside
// withNumber; the caller verifies the row.
func (s *Service) saveOnboarded(tx *gorm.DB, orgID uuid.UUID, in ExchangeInput, creds platform.Creds, pn *platform.PhoneNumber) (*models.PlatformAccount, error) {
	enc, err := s.box.SealString(creds.AccessToken)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		name = pn.VerifiedName
	}
	if name == "" {
		name = pn.DisplayPhoneNumber
	}
	verify := strings.TrimSpace(in.WebhookVerifyToken)
	var existing models.PlatformAccount
	err = tx.Where("organization_id = ? AND phone_number_id = ?", orgID, creds.PhoneNumberID).Take(&existing).Error
	switch {
	case err == nil:
		updates := map[string]any{"access_token_enc": enc, "business_account_id": creds.BusinessAccountID,
			"phone_number": pn.DisplayPhoneNumber, "verified_name": pn.VerifiedName, "quality_rating": pn.QualityRating,
			"messaging_limit": pn.Tier(), "platform_type": pn.PlatformType, "is_coexistence": pn.IsCoexistence(), "updated_at": s.now()}
		if verify != "" {
			updates["webhook_verify_token"] = verify
		}
		if err := tx.Model(&existing).Updates(updates).Error; err != nil {
			return nil, err
		}
		return &existing, nil
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return nil, err
	}
	if verify == "" {
		verify = randomHex(16)
	}
	row := models.PlatformAccount{OrganizationID: orgID, Name: name, PhoneNumber: pn.DisplayPhoneNumber, PhoneNumberID: creds.PhoneNumberID,
		BusinessAccountID: creds.BusinessAccountID, AccessTokenEnc: enc, WebhookVerifyToken: verify, Status: models.AccountPending,
		VerifiedName: pn.VerifiedName, QualityRating: pn.QualityRating, MessagingLimit: pn.Tier(), PlatformType: pn.PlatformType,
		IsCoexistence: pn.IsCoexistence()}
	if err := insert(tx, &row); err != nil {
		// The name is taken in the organization (the number is not: it
		// was looked up above).
		if apperr.Is(err, apperr.Conflict) {
			row.Name = fmt.Sprintf("%s (%s)", name, creds.PhoneNumberID)
			err = insert(tx, &row)
		}
		if err != nil {
			return nil, err
		}
	}
	return &row, nil
}

var pinFormat = regexp.MustCompile(`^[0-9]{6}$`)

// Register registers the account's number with pin (a random one when empty)
// and activates it; coexistence numbers are activated without a PIN.
func (s *Service) Register(ctx context.Context, orgID, id uuid.UUID, pin string) (*Onboarded, error) {
	defer s.recent.Clear() // after the change, for RecentSender
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if pin != "" && !pinFormat.MatchString(pin) {
		return nil, apperr.Invalidf("pin must be 6 digits")
	}
	if a.IsCoexistence {
		return s.activate(ctx, a)
	}
	if pin == "" {
		pin = newPIN()
	}
	return s.register(ctx, a, pin, false)
}

// register calls the provider, then verifies and activates the account: a
// registration the provider accepts proves the token's access to the
// number. A number another organization owns is a 409 before the provider
// is called. During exchange-token a provider failure leaves the account
// pending_registration with a warning; on the register endpoint it is an
// error.
func (s *Service) register(ctx context.Context, a *Account, pin string, soft bool) (*Onboarded, error) {
	pinEnc, err := s.box.SealString(pin)
	if err != nil {
		return nil, err
	}
	err = s.withNumber(ctx, a.OrganizationID, a.PhoneNumberID, func(tx *gorm.DB) error {
		if err := s.provider.Register(ctx, a.Creds(), pin); err != nil {
			return err
		}
		return s.verify(tx, &a.PlatformAccount, map[string]any{"status": models.AccountActive, "last_error": "", "pin_enc": pinEnc})
	})
	if err != nil {
		if _, fromProvider := platform.AsError(err); !fromProvider || !soft {
			return nil, providerFailure("registering the number", err)
		}
		s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Where("id = ?", a.ID).
			Updates(map[string]any{"status": models.AccountPendingRegistration, "last_error": apperr.Clip(err.Error(), 500), "updated_at": s.now()})
		a, gerr := s.Get(ctx, a.OrganizationID, a.ID)
		if gerr != nil {
			return nil, gerr
		}
		return &Onboarded{Account: a, Warning: "the phone number could not be registered (" + err.Error() +
			"); register it with POST /api/accounts/" + a.ID.String() + "/register"}, nil
	}
	if a, err = s.Get(ctx, a.OrganizationID, a.ID); err != nil {
		return nil, err
	}
	return &Onboarded{Account: a, PIN: pin}, nil
}

// activate makes a coexistence account active without registration. Such
// an account has had its details read with its token, so it is verified
// already; verify keeps the ownership rule in one place all the same.
func (s *Service) activate(ctx context.Context, a *Account) (*Onboarded, error) {
	err := s.withNumber(ctx, a.OrganizationID, a.PhoneNumberID, func(tx *gorm.DB) error {
		return s.verify(tx, &a.PlatformAccount, map[string]any{"status": models.AccountActive, "last_error": ""})
	})
	if err != nil {
		return nil, err
	}
	if a, err = s.Get(ctx, a.OrganizationID, a.ID); err != nil {
		return nil, err
	}
	return &Onboarded{Account: a}, nil
}

// Subscribe subscribes the app to the webhooks of the account's business
// account, so that the provider sends its messages and statuses here.
// Embedded signup does it; an account connected by hand needs it once
// (the console's Subscribe). Like registration, it runs under the number's
// lock: a number another organization owns is a 409 before the provider is
// called.
func (s *Service) Subscribe(ctx context.Context, orgID, id uuid.UUID) error {
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return err
	}
	err = s.withNumber(ctx, orgID, a.PhoneNumberID, func(*gorm.DB) error {
		return s.provider.SubscribeApp(ctx, a.AccessToken, a.BusinessAccountID)
	})
	if err != nil {
		return providerFailure("subscribing to the account's webhooks", err)
	}
	return nil
}
