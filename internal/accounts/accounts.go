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
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/memo"
	"wharf/internal/infra/secrets"
	"wharf/internal/infra/tenant"
	"wharf/internal/orgsettings"
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
	// recent serves RecentSender; every change made through this Service
	// clears it.
	recent *memo.Cache[senderKey, Account]
}

// NewService wires the accounts domain.
func NewService(db *gorm.DB, box *secrets.Box, provider *platform.Client, settings *orgsettings.Service, enq *jobs.Enqueuer, log *slog.Logger) *Service {
	return &Service{db: db, box: box, provider: provider, settings: settings, enq: enq, log: log,
		now: func() time.Time { return time.Now().UTC() }, recent: memo.New[senderKey, Account](RecentTTL, 10_000)}
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

// Open decrypts the token of an account row that another domain read in a
// statement of its own (the worker's send claim reads it with the message).
func (s *Service) Open(row models.PlatformAccount) (*Account, error) { return s.open(row) }

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

// Names answers the names of the organization's accounts among ids (an id
// of no account of the organization is absent): other domains' listings
// show their rows' account names with one lookup per page.
func (s *Service) Names(ctx context.Context, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	out := make(map[uuid.UUID]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   uuid.UUID
		Name string
	}
	err := s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Scopes(tenant.Scope(orgID)).
		Select("id, name").Where("id IN ?", ids).Scan(&rows).Error
	for _, r := range rows {
		out[r.ID] = r.Name
	}
	return out, err
}

// IDNamed answers the id of the organization's account with this name
// (case-insensitive, as ByName), uuid.Nil when it has none, without opening
// it: a filter by account name resolves it before its statement.
func (s *Service) IDNamed(ctx context.Context, orgID uuid.UUID, name string) (uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Scopes(tenant.Scope(orgID)).
		Where("lower(name) = lower(?)", strings.TrimSpace(name)).Limit(1).Pluck("id", &ids).Error
	if err != nil || len(ids) == 0 {
		return uuid.Nil, err
	}
	return ids[0], nil
}

// Get returns one account with its token.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*Account, error) {
	row, err := tenant.Get[models.PlatformAccount](ctx, s.db, orgID, id, "account not found")
	if err != nil {
		return nil, err
	}
	return s.open(*row)
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

// Sender picks the account to send from: the named one, else the given
// one (a contact's account), else the organization's oldest active account.
// The account must be active.
func (s *Service) Sender(ctx context.Context, orgID uuid.UUID, name string, preferred *uuid.UUID) (*Account, error) {
	var a *Account
	var err error
	switch {
	case strings.TrimSpace(name) != "":
		a, err = s.ByName(ctx, orgID, name)
	case preferred != nil:
		a, err = s.Get(ctx, orgID, *preferred)
		if apperr.Is(err, apperr.NotFound) {
			return s.Sender(ctx, orgID, "", nil)
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

// RecentTTL is how long RecentSender may answer from memory.
const RecentTTL = 2 * time.Second

type senderKey struct {
	org       uuid.UUID
	name      string
	preferred uuid.UUID
}

// RecentSender is Sender answered from this process's memory for up to
// RecentTTL: for the template send path, whose worker re-reads the account
// (Get) before it calls the provider, so that an account disconnected on
// another replica within the last seconds fails the message there instead
// of refusing the request. Refusals are not remembered.
func (s *Service) RecentSender(ctx context.Context, orgID uuid.UUID, name string, preferred *uuid.UUID) (*Account, error) {
	k := senderKey{org: orgID, name: strings.ToLower(strings.TrimSpace(name))}
	if preferred != nil {
		k.preferred = *preferred
	}
	if a, ok := s.recent.Get(k); ok {
		return &a, nil
	}
	a, err := s.Sender(ctx, orgID, name, preferred)
	if err != nil {
		return nil, err
	}
	s.recent.Put(k, *a)
	return a, nil
}

// NamedIn answers the organization's account with this exact name, read
// through db (a caller's transaction, which may hold an account it just
// created), without its token.
func (s *Service) NamedIn(ctx context.Context, db *gorm.DB, orgID uuid.UUID, name string) (*models.PlatformAccount, error) {
	var rows []models.PlatformAccount
	if err := db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("name = ?", name).Limit(1).Find(&rows).Error; err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, apperr.NotFoundf("no account named %q", name)
	}
	return &rows[0], nil
}
