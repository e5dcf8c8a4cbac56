package platform

import (
	"context"
	"net/url"
	"strings"
)

// PhoneNumber is the provider's view of a business phone number.
type PhoneNumber struct {
	ID                 string `json:"id"`
	VerifiedName       string `json:"verified_name"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	QualityRating      string `json:"quality_rating"`
	PlatformType       string `json:"platform_type"`
	Throughput         struct {
		Level string `json:"level"`
	} `json:"throughput"`
	MessagingLimitTier string `json:"messaging_limit_tier"`
	// Newer API versions report the limit under this name.
	BusinessManagerMessagingLimit string `json:"whatsapp_business_manager_messaging_limit"`
	IsOnBizApp                    bool   `json:"is_on_biz_app"`
}

// Tier returns the messaging limit tier under either name.
func (p *PhoneNumber) Tier() string {
	if p.BusinessManagerMessagingLimit != "" {
		return p.BusinessManagerMessagingLimit
	}
	return p.MessagingLimitTier
}

// IsCoexistence reports a number still in use on the business mobile app:
// such numbers are active without registration.
func (p *PhoneNumber) IsCoexistence() bool {
	t := strings.ToUpper(p.PlatformType)
	return p.IsOnBizApp || t == "SMB" || t == "SMB_CLOUD_API"
}

const phoneFields = "id,verified_name,display_phone_number,quality_rating,platform_type,throughput,messaging_limit_tier,whatsapp_business_manager_messaging_limit,is_on_biz_app"

// PhoneNumber fetches the details of the account's phone number.
func (c *Client) PhoneNumber(ctx context.Context, cr Creds) (*PhoneNumber, error) {
	var out PhoneNumber
	return &out, c.getJSON(ctx, cr.AccessToken, cr.PhoneNumberID, url.Values{"fields": {phoneFields}}, &out)
}

// PhoneNumbers lists the phone numbers of a business account.
func (c *Client) PhoneNumbers(ctx context.Context, token, businessAccountID string) ([]PhoneNumber, error) {
	var out struct {
		Data []PhoneNumber `json:"data"`
	}
	return out.Data, c.getJSON(ctx, token, businessAccountID+"/phone_numbers", url.Values{"fields": {phoneFields}}, &out)
}

// Register registers the phone number for the cloud API with a two-step PIN.
func (c *Client) Register(ctx context.Context, cr Creds, pin string) error {
	var out successResp
	return c.postJSON(ctx, cr.AccessToken, cr.PhoneNumberID+"/register",
		map[string]string{"messaging_product": "whatsapp", "pin": pin}, &out)
}

// SubscribeApp subscribes our app to the business account's webhooks.
func (c *Client) SubscribeApp(ctx context.Context, token, businessAccountID string) error {
	var out successResp
	return c.postJSON(ctx, token, businessAccountID+"/subscribed_apps", struct{}{}, &out)
}

// ExchangeCode trades a short-lived embedded-signup code for an access token.
func (c *Client) ExchangeCode(ctx context.Context, appID, appSecret, code string) (string, error) {
	var out struct {
		AccessToken string `json:"access_token"`
	}
	q := url.Values{"client_id": {appID}, "client_secret": {appSecret}, "code": {code}}
	if err := c.getJSON(ctx, "", "oauth/access_token", q, &out); err != nil {
		return "", err
	}
	if out.AccessToken == "" {
		return "", &Error{Message: "the provider returned no access token", Class: Permanent}
	}
	return out.AccessToken, nil
}

// TokenInfo is what debug_token reports of a token.
type TokenInfo struct {
	AppID          string   `json:"app_id"`
	IsValid        bool     `json:"is_valid"`
	Scopes         []string `json:"scopes"`
	GranularScopes []struct {
		Scope     string   `json:"scope"`
		TargetIDs []string `json:"target_ids"`
	} `json:"granular_scopes"`
}

// Targets returns the target ids granted for a scope.
func (t *TokenInfo) Targets(scope string) []string {
	for _, g := range t.GranularScopes {
		if g.Scope == scope {
			return g.TargetIDs
		}
	}
	return nil
}

// DebugToken inspects a user token with the app's credentials.
func (c *Client) DebugToken(ctx context.Context, appID, appSecret, inputToken string) (*TokenInfo, error) {
	var out struct {
		Data TokenInfo `json:"data"`
	}
	return &out.Data, c.getJSON(ctx, appID+"|"+appSecret, "debug_token", url.Values{"input_token": {inputToken}}, &out)
}

// BusinessAccount is a business account the token can use.
type BusinessAccount struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SharedBusinessAccounts lists the business accounts shared with the token:
// the fallback when debug_token reports no granular targets.
func (c *Client) SharedBusinessAccounts(ctx context.Context, token string) ([]BusinessAccount, error) {
	var out struct {
		Data []BusinessAccount `json:"data"`
	}
	return out.Data, c.getJSON(ctx, token, "me/whatsapp_business_accounts", nil, &out)
}
