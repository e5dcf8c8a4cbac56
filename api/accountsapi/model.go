package accountsapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/accounts"
	"wharf/models"
)

type accountSummary struct {
	ID                uuid.UUID `json:"id"`
	Name              string    `json:"name"`
	PhoneNumber       string    `json:"phone_number"`
	PhoneNumberID     string    `json:"phone_number_id"`
	BusinessAccountID string    `json:"business_account_id"`
	Status            string    `json:"status"`
	CreatedAt         time.Time `json:"created_at"`

	// The health of the account, in the list too (the console's accounts
	// page shows it for every account without reading each one's token).
	MessagingTier         string `json:"messaging_tier"`          // what paces campaigns
	MessagingTierOverride string `json:"messaging_tier_override"` // "" = the provider's tier
	MessagingLimit        string `json:"messaging_limit"`         // the provider's tier
	QualityRating         string `json:"quality_rating"`
	VerifiedName          string `json:"verified_name"`
	IsCoexistence         bool   `json:"is_coexistence"`
	LastError             string `json:"last_error"`
}

type accountDetail struct {
	accountSummary
	AccessToken        string    `json:"access_token"`
	WebhookVerifyToken string    `json:"webhook_verify_token"`
	UpdatedAt          time.Time `json:"updated_at"`

	// VerifiedAt is when the account became its number's owner; null for a
	// claim the provider has not confirmed.
	VerifiedAt *time.Time `json:"verified_at"`
}

func toAccountSummary(a models.PlatformAccount) accountSummary {
	return accountSummary{ID: a.ID, Name: a.Name, PhoneNumber: a.PhoneNumber, PhoneNumberID: a.PhoneNumberID,
		BusinessAccountID: a.BusinessAccountID, Status: a.Status, CreatedAt: web.UTC(a.CreatedAt),
		MessagingTier: accounts.EffectiveTier(&a), MessagingTierOverride: a.MessagingTierOverride, MessagingLimit: a.MessagingLimit,
		QualityRating: a.QualityRating, VerifiedName: a.VerifiedName, IsCoexistence: a.IsCoexistence, LastError: a.LastError}
}

func toAccountDetail(a *accounts.Account) accountDetail {
	return accountDetail{accountSummary: toAccountSummary(a.PlatformAccount), AccessToken: a.AccessToken,
		WebhookVerifyToken: a.WebhookVerifyToken, VerifiedAt: web.UTCPtr(a.VerifiedAt), UpdatedAt: web.UTC(a.UpdatedAt)}
}

// accountRequest converts to accounts.Input field for field; nil fields are
// unchanged.
type accountRequest struct {
	Name               *string `json:"name"`
	PhoneNumberID      *string `json:"phone_number_id"`
	BusinessAccountID  *string `json:"business_account_id"`
	AccessToken        *string `json:"access_token"`
	WebhookVerifyToken *string `json:"webhook_verify_token"`
	MessagingTier      *string `json:"messaging_tier"`
}

// createdAccount is the answer to POST /api/accounts.
type createdAccount struct {
	ID                 uuid.UUID `json:"id"`
	Name               string    `json:"name"`
	Status             string    `json:"status"`
	CreatedAt          time.Time `json:"created_at"`
	WebhookVerifyToken string    `json:"webhook_verify_token"`
}

type testResp struct {
	Connected          bool   `json:"connected"`
	PhoneNumber        string `json:"phone_number"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	VerifiedName       string `json:"verified_name"`
	QualityRating      string `json:"quality_rating"`
	Error              string `json:"error,omitempty"`
}

type signupConfigResp struct {
	PlatformAppID      string `json:"platform_app_id"`
	PlatformConfigID   string `json:"platform_config_id"`
	PlatformAPIVersion string `json:"platform_api_version"`
	// ScriptURL is the provider's embedded-signup script (the one outside
	// script the console's signup page may load).
	ScriptURL string `json:"script_url"`
	// Configured says whether the organization set its provider app (app
	// id and secret in the organization settings): without it, there is
	// no embedded signup, only the manual form.
	Configured bool `json:"configured"`
}

// exchangeTokenRequest converts to accounts.ExchangeInput field for field.
type exchangeTokenRequest struct {
	Code               string `json:"code"`
	PhoneID            string `json:"phone_id"`
	BusinessAccountID  string `json:"business_account_id"`
	Name               string `json:"name"`
	WebhookVerifyToken string `json:"webhook_verify_token"`
}

type registerRequest struct {
	PIN string `json:"pin"`
}

type onboardedResp struct {
	Account accountDetail `json:"account"`
	PIN     string        `json:"pin,omitempty"`     // when the service registered the number
	Warning string        `json:"warning,omitempty"` // when registration failed
}

func toOnboardedResp(o *accounts.Onboarded) onboardedResp {
	return onboardedResp{Account: toAccountDetail(o.Account), PIN: o.PIN, Warning: o.Warning}
}
