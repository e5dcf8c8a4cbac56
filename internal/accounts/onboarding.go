package accounts

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/apperr"
	"wharf/models"
	"wharf/platform"
)

// SignupConfig is what the embedded-signup widget needs. The app secret is
// never part of it.
type SignupConfig struct {
	AppID, ConfigID, APIVersion string
}

// EmbeddedSignupConfig returns the organization's embedded-signup settings.
func (s *Service) EmbeddedSignupConfig(ctx context.Context, orgID uuid.UUID) (*SignupConfig, error) {
	_, st, err := s.settings.Get(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return &SignupConfig{AppID: st.ProviderAppID, ConfigID: st.ProviderConfigID, APIVersion: s.provider.Version()}, nil
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
// subscribes the app to the account's webhooks and registers the number
// with a generated PIN, except for numbers still on the business mobile app
// (coexistence), which are active without registration.
func (s *Service) ExchangeToken(ctx context.Context, orgID uuid.UUID, in ExchangeInput) (*Onboarded, error) {
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
	if pn == nil || pn.PlatformType == "" {
		if pn, err = s.provider.PhoneNumber(ctx, creds); err != nil {
			return nil, providerFailure("reading the phone number", err)
		}
	}
	if err := s.provider.SubscribeApp(ctx, token, wabaID); err != nil {
		return nil, providerFailure("subscribing to the account's webhooks", err)
	}

	a, err := s.saveOnboarded(ctx, orgID, in, creds, pn)
	if err != nil {
		return nil, err
	}
	if pn.IsCoexistence() {
		return s.activate(ctx, a, "")
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
// re-onboards the same number.
func (s *Service) saveOnboarded(ctx context.Context, orgID uuid.UUID, in ExchangeInput, creds platform.Creds, pn *platform.PhoneNumber) (*Account, error) {
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
	err = s.db.WithContext(ctx).Where("phone_number_id = ?", creds.PhoneNumberID).Take(&existing).Error
	switch {
	case err == nil && existing.OrganizationID != orgID:
		return nil, apperr.Conflictf("this phone number is connected to another organization")
	case err == nil:
		updates := map[string]any{"access_token_enc": enc, "business_account_id": creds.BusinessAccountID,
			"phone_number": pn.DisplayPhoneNumber, "verified_name": pn.VerifiedName, "quality_rating": pn.QualityRating,
			"messaging_limit": pn.Tier(), "platform_type": pn.PlatformType, "is_coexistence": pn.IsCoexistence(), "updated_at": s.now()}
		if verify != "" {
			updates["webhook_verify_token"] = verify
		}
		if err := s.db.WithContext(ctx).Model(&existing).Updates(updates).Error; err != nil {
			return nil, err
		}
		return s.Get(ctx, orgID, existing.ID)
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
	if err := s.insert(ctx, &row); err != nil {
		if apperr.Is(err, apperr.Conflict) {
			row.Name = fmt.Sprintf("%s (%s)", name, creds.PhoneNumberID)
			err = s.insert(ctx, &row)
		}
		if err != nil {
			return nil, err
		}
	}
	return s.open(row)
}

var pinFormat = regexp.MustCompile(`^[0-9]{6}$`)

// Register registers the account's number with pin (a random one when empty)
// and activates it; coexistence numbers are activated without a PIN.
func (s *Service) Register(ctx context.Context, orgID, id uuid.UUID, pin string) (*Onboarded, error) {
	a, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if pin != "" && !pinFormat.MatchString(pin) {
		return nil, apperr.Invalidf("pin must be 6 digits")
	}
	if a.IsCoexistence {
		return s.activate(ctx, a, "")
	}
	if pin == "" {
		pin = newPIN()
	}
	return s.register(ctx, a, pin, false)
}

// register calls the provider. During exchange-token a failure leaves the
// account pending_registration with a warning; on the register endpoint it
// is an error.
func (s *Service) register(ctx context.Context, a *Account, pin string, soft bool) (*Onboarded, error) {
	if err := s.provider.Register(ctx, a.Creds(), pin); err != nil {
		if !soft {
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
	return s.activate(ctx, a, pin)
}

func (s *Service) activate(ctx context.Context, a *Account, pin string) (*Onboarded, error) {
	updates := map[string]any{"status": models.AccountActive, "last_error": "", "updated_at": s.now()}
	if pin != "" {
		enc, err := s.box.SealString(pin)
		if err != nil {
			return nil, err
		}
		updates["pin_enc"] = enc
	}
	if err := s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Where("id = ?", a.ID).Updates(updates).Error; err != nil {
		return nil, err
	}
	a, err := s.Get(ctx, a.OrganizationID, a.ID)
	if err != nil {
		return nil, err
	}
	return &Onboarded{Account: a, PIN: pin}, nil
}
