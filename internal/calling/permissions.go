package calling

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/models"
	"wharf/platform"
)

// Call permission states the provider reports (passed through as they
// come: the provider may add others).
const (
	PermissionNone      = "no_permission"
	PermissionTemporary = "temporary"
	PermissionPermanent = "permanent"
)

// permissionRequestBody is the text of the permission request; the
// provider adds its own allow/decline buttons under it.
const permissionRequestBody = "We would like to call you on this number. Do you allow calls from us?"

// RequestPermission asks the contact, through the named account, for
// permission to call them: one interactive call_permission_request
// message. It answers the message's id (the spec's permission_id); the
// contact's answer arrives later and PermissionStatus reads it.
func (s *Service) RequestPermission(ctx context.Context, orgID, contactID uuid.UUID, accountName string) (uuid.UUID, error) {
	a, c, err := s.permissionParties(ctx, orgID, contactID, accountName)
	if err != nil {
		return uuid.Nil, err
	}
	body := permissionRequestBody
	if s.settings != nil {
		if name, _, err := s.settings.Get(ctx, orgID); err == nil && strings.TrimSpace(name) != "" {
			body = strings.TrimSpace(name) + " would like to call you on this number. Do you allow calls from us?"
		}
	}
	return s.messages.SendCallPermissionRequest(ctx, orgID, c.ID, a.ID, body)
}

// PermissionStatus reads the contact's call permission for the named
// account live from the provider (never cached: the user may revoke it at
// any time). expiresAt is set for a temporary permission.
func (s *Service) PermissionStatus(ctx context.Context, orgID, contactID uuid.UUID, accountName string) (status string, expiresAt *time.Time, err error) {
	a, c, err := s.permissionParties(ctx, orgID, contactID, accountName)
	if err != nil {
		return "", nil, err
	}
	perm, err := s.provider.CallPermissions(ctx, a.Creds(), phone.Digits(c.PhoneNumber))
	if err != nil {
		return "", nil, permissionProviderError("reading the call permission", err)
	}
	status = perm.Permission.Status
	if status == "" {
		status = PermissionNone
	}
	if perm.Permission.ExpirationTime > 0 {
		t := time.Unix(perm.Permission.ExpirationTime, 0).UTC()
		expiresAt = &t
	}
	return status, expiresAt, nil
}

// permissionParties finds the named account and the contact, both in the
// organization.
func (s *Service) permissionParties(ctx context.Context, orgID, contactID uuid.UUID, accountName string) (*accounts.Account, *models.Contact, error) {
	if strings.TrimSpace(accountName) == "" {
		return nil, nil, apperr.Invalidf("platform_account is required (the name of one of the organization's accounts)")
	}
	c, err := s.contacts.Contact(ctx, orgID, contactID)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.accounts.ByName(ctx, orgID, accountName)
	if err != nil {
		return nil, nil, err
	}
	return a, c, nil
}

// permissionProviderError turns the provider's refusal into a 400 with its
// words, its rate limit into a 429 and its failure into a 502.
func permissionProviderError(step string, err error) error {
	pe, ok := platform.AsError(err)
	if !ok {
		return err
	}
	switch pe.Class {
	case platform.Permanent:
		return apperr.Invalidf("the provider refused %s: %s", step, pe.Error())
	case platform.Throttled:
		return apperr.TooManyf("the provider's rate limit was reached while %s; retry shortly", step)
	}
	return apperr.Upstreamf("the provider failed while %s: %s", step, pe.Error())
}
