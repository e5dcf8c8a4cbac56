// Package catalogs owns product catalogs and their products, which live at
// the provider (under the business of a platform account) and are mirrored
// here so that they can be listed and shared without a provider call.
//
// Every change goes to the provider first and is stored here only once the
// provider accepted it: a refusal stores nothing and answers the provider's
// words (400 for its validation errors, 502 for its trouble). A failure
// between the two (the provider accepted, the local write did not happen)
// leaves the provider ahead of us; Sync repairs it, since it matches the
// provider's catalogs and products by their provider ids. The unique
// indexes on those ids and upserts make creates and concurrent syncs store
// each provider object once.
//
// Files: catalogs.go (the service, reads), validate.go (input rules,
// price and currency), mirror.go (changes made at the provider, then
// here), sync.go (the provider's catalogs brought here).
package catalogs

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
	"wharf/platform"
)

const (
	msgCatalogNotFound = "catalog not found"
	msgProductNotFound = "product not found"
)

// Accounts opens an organization's platform accounts with their credentials
// (the accounts domain), and names them for the listings.
type Accounts interface {
	Get(ctx context.Context, orgID, id uuid.UUID) (*accounts.Account, error)
	ByName(ctx context.Context, orgID uuid.UUID, name string) (*accounts.Account, error)
	Names(ctx context.Context, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error)
}

// Service manages catalogs and products.
type Service struct {
	db       *gorm.DB
	accounts Accounts
	provider *platform.Client
	now      func() time.Time
}

// NewService wires the catalogs domain.
func NewService(db *gorm.DB, accts Accounts, provider *platform.Client) *Service {
	return &Service{db: db, accounts: accts, provider: provider, now: func() time.Time { return time.Now().UTC() }}
}

// Catalog is a catalog as answered: with its account's name and the number
// of its active products.
type Catalog struct {
	models.Catalog  `gorm:"embedded"`
	PlatformAccount string
	ProductCount    int64
}

// catalogView reads catalogs with their product count; callers add the
// conditions and the order, and name the accounts (withAccounts).
func (s *Service) catalogView(ctx context.Context, orgID uuid.UUID) *gorm.DB {
	return s.db.WithContext(ctx).Table("catalogs AS c").
		Select(`c.*, (SELECT count(*) FROM products p WHERE p.catalog_id = c.id AND p.is_active) AS product_count`).
		Where("c.organization_id = ?", orgID)
}

// withAccounts sets the catalogs' account names, read from the accounts
// domain in one lookup. A catalog's account is never missing (its rows
// cascade with the account); one deleted since the catalogs were read is
// left out, as the join did.
func (s *Service) withAccounts(ctx context.Context, orgID uuid.UUID, cs []Catalog) ([]Catalog, error) {
	ids := make([]uuid.UUID, 0, len(cs))
	for _, c := range cs {
		if !slices.Contains(ids, c.AccountID) {
			ids = append(ids, c.AccountID)
		}
	}
	names, err := s.accounts.Names(ctx, orgID, ids)
	if err != nil {
		return nil, err
	}
	out := cs[:0]
	for _, c := range cs {
		if name, ok := names[c.AccountID]; ok {
			c.PlatformAccount = name
			out = append(out, c)
		}
	}
	return out, nil
}

// List answers the organization's catalogs ordered by name, only those of
// the named account when accountName is not empty (an unknown name is a
// 400, as everywhere an account is named).
func (s *Service) List(ctx context.Context, orgID uuid.UUID, accountName string) ([]Catalog, error) {
	q := s.catalogView(ctx, orgID)
	if strings.TrimSpace(accountName) != "" {
		a, err := s.accounts.ByName(ctx, orgID, accountName)
		if err != nil {
			return nil, err
		}
		q = q.Where("c.account_id = ?", a.ID)
	}
	out := []Catalog{}
	if err := q.Order("c.name, c.id").Scan(&out).Error; err != nil {
		return nil, err
	}
	return s.withAccounts(ctx, orgID, out)
}

// Get answers one catalog of the organization.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*Catalog, error) {
	var out []Catalog
	if err := s.catalogView(ctx, orgID).Where("c.id = ?", id).Scan(&out).Error; err != nil {
		return nil, err
	}
	out, err := s.withAccounts(ctx, orgID, out)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, apperr.NotFoundf(msgCatalogNotFound)
	}
	return &out[0], nil
}

// Products answers a catalog's products ordered by name, those a sync no
// longer found at the provider included (is_active false).
func (s *Service) Products(ctx context.Context, orgID, catalogID uuid.UUID) ([]models.Product, error) {
	if _, err := tenant.Get[models.Catalog](ctx, s.db, orgID, catalogID, msgCatalogNotFound); err != nil {
		return nil, err
	}
	out := []models.Product{}
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("catalog_id = ?", catalogID).Order("name, id").Find(&out).Error
	return out, err
}

// Product answers one product of the organization.
func (s *Service) Product(ctx context.Context, orgID, id uuid.UUID) (*models.Product, error) {
	return tenant.Get[models.Product](ctx, s.db, orgID, id, msgProductNotFound)
}

// providerError turns the provider's refusal into a 400 with its words, and
// its failure into a 502.
func providerError(step string, err error) error {
	pe, ok := platform.AsError(err)
	if !ok {
		return err
	}
	if pe.Class == platform.Permanent {
		return apperr.Invalidf("the provider refused %s: %s", step, pe.Error())
	}
	return apperr.Upstreamf("the provider failed while %s: %s", step, pe.Error())
}
