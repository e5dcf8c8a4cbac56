package messages

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/integration/docframe"
	"wharf/internal/orgsettings"
)

// accountHook mirrors Platform Accounts into the core's platform accounts,
// in the document's transaction: the core account has the document's name
// (account_name), phone_number_id, business_account_id, token and verify
// token: before_insert creates it, validate (on a save) updates it,
// on_trash deletes it. The core account is found by name; phone_id, business_id and
// account_name cannot change (the core refuses a number change, and the
// name names the document). Deleting the document deletes the core
// account (its contacts and messages stay, as when the core's own
// DELETE /api/accounts/{id} is used).
type accountHook struct{ s *Service }

func (accountHook) Doctypes() []string { return []string{DoctypeAccount} }

func (h accountHook) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, doc *docframe.Doc) error {
	switch ev {
	case docframe.BeforeInsert:
		return h.create(ctx, tx, doc)
	case docframe.Validate:
		if err := h.defaults(ctx, tx, doc); err != nil {
			return err
		}
		// A save (an insert has creation = modified, and was mirrored by
		// before_insert). Mirrored before the write, while the new secret
		// is still known (NewPassword).
		if !doc.Creation.Equal(doc.Modified) {
			return h.update(ctx, tx, doc)
		}
	case docframe.OnTrash: // the core account goes with the document
		a, err := h.s.core(ctx, tx, doc.OrganizationID, doc.Name)
		if apperr.Is(err, apperr.NotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return h.s.Accounts.DeleteIn(ctx, tx, doc.OrganizationID, a)
	}
	return nil
}

func (h accountHook) create(ctx context.Context, tx *gorm.DB, doc *docframe.Doc) error {
	token, _ := doc.NewPassword("token")
	name, phoneID, bizID, verify := str(doc.Get("account_name")), str(doc.Get("phone_id")), str(doc.Get("business_id")),
		str(doc.Get("webhook_verify_token"))
	for k, v := range map[string]string{"account_name": name, "token": token, "phone_id": phoneID, "business_id": bizID,
		"webhook_verify_token": verify} {
		if v == "" {
			return docframe.Validationf("%s is required", k)
		}
	}
	a, _, err := h.s.Accounts.CreateIn(ctx, tx, doc.OrganizationID, accounts.Input{Name: &name, PhoneNumberID: &phoneID,
		BusinessAccountID: &bizID, AccessToken: &token, WebhookVerifyToken: &verify})
	if err != nil {
		return err
	}
	doc.Set("status", a.Status)
	return h.appSecret(ctx, doc)
}

func (h accountHook) update(ctx context.Context, tx *gorm.DB, doc *docframe.Doc) error {
	row, err := h.s.Accounts.NamedIn(ctx, tx, doc.OrganizationID, doc.Name)
	if err != nil {
		return err
	}
	if str(doc.Get("account_name")) != doc.Name {
		return docframe.Validationf("account_name cannot change (it names the account): create another Platform Account")
	}
	in := accounts.Input{}
	if t, ok := doc.NewPassword("token"); ok {
		if t == "" {
			return docframe.Validationf("token is required")
		}
		in.AccessToken = &t
	}
	v := str(doc.Get("webhook_verify_token"))
	in.WebhookVerifyToken = &v
	if row.PhoneNumberID != str(doc.Get("phone_id")) || row.BusinessAccountID != str(doc.Get("business_id")) {
		return docframe.Validationf("phone_id and business_id cannot change: create another Platform Account")
	}
	if _, err := h.s.Accounts.UpdateIn(ctx, tx, doc.OrganizationID, row.ID, in); err != nil {
		return err
	}
	return h.appSecret(ctx, doc)
}

// appSecret writes a given app_secret to the organization's
// provider_app_secret, with which the core checks webhook signatures (one
// per organization in the core: the last account saved with one sets it).
func (h accountHook) appSecret(ctx context.Context, doc *docframe.Doc) error {
	secret, ok := doc.NewPassword("app_secret")
	if !ok || secret == "" || h.s.Settings == nil {
		return nil
	}
	return h.s.Settings.Apply(ctx, doc.OrganizationID, orgsettings.Update{ProviderAppSecret: &secret})
}

// defaults keeps one default account per direction: setting a flag on
// this document clears it on the others, in the same transaction.
func (h accountHook) defaults(ctx context.Context, tx *gorm.DB, doc *docframe.Doc) error {
	for _, field := range []string{"is_default_incoming", "is_default_outgoing"} {
		if n, _ := doc.Get(field).(int64); n != 1 {
			continue
		}
		for range 100 {
			names, err := h.s.frame.NamesBy(ctx, tx, doc.OrganizationID, DoctypeAccount, field, []string{"1"})
			if err != nil {
				return err
			}
			other := names["1"]
			if other == "" || other == doc.Name {
				break
			}
			if _, _, err := h.s.frame.UpdateDocIn(ctx, tx, doc.OrganizationID, doc.User, DoctypeAccount, other,
				map[string]any{field: 0}); err != nil {
				return fmt.Errorf("clearing %s on %s: %w", field, other, err)
			}
		}
	}
	return nil
}

// afterAccountSaved enqueues the core account's verification once the
// document committed.
func (s *Service) afterAccountSaved(ctx context.Context, e docframe.DocEvent) {
	if e.Event == docframe.EventAfterSave && e.Doc.Creation.Equal(e.Doc.Modified) {
		return
	}
	id, err := s.core(ctx, nil, e.OrganizationID, e.Doc.Name)
	if err != nil {
		s.Log.Warn("platform account: no core account to verify", "account", e.Doc.Name, "error", err)
		return
	}
	s.Accounts.RequestRefresh(ctx, e.OrganizationID, id)
}

// core finds the core account of a Platform Account (by name, in db: the
// caller's transaction, or the pool when nil).
func (s *Service) core(ctx context.Context, db *gorm.DB, orgID uuid.UUID, name string) (uuid.UUID, error) {
	if db == nil {
		db = s.DB
	}
	a, err := s.Accounts.NamedIn(ctx, db, orgID, name)
	if apperr.Is(err, apperr.NotFound) {
		return uuid.Nil, apperr.NotFoundf("Platform Account %s has no core account", name)
	}
	if err != nil {
		return uuid.Nil, err
	}
	return a.ID, nil
}
