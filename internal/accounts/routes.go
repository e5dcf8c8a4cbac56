package accounts

import (
	"context"

	"github.com/google/uuid"
)

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
