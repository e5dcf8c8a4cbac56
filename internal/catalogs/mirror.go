package catalogs

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/accounts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
	"wharf/platform"
)

var forUpdate = clause.Locking{Strength: "UPDATE"}

// idRow scans a RETURNING id (gorm scans a bare uuid.UUID as a byte slice).
type idRow struct{ ID uuid.UUID }

// CreateCatalog creates a catalog at the provider under the named account's
// business, then here. The row is upserted on its provider id, so a sync
// that imported the new catalog in between is not duplicated.
func (s *Service) CreateCatalog(ctx context.Context, orgID uuid.UUID, accountName, name string) (*Catalog, error) {
	if strings.TrimSpace(accountName) == "" {
		return nil, apperr.Invalidf("platform_account is required (the name of one of the organization's accounts)")
	}
	name, err := checkName("name", name)
	if err != nil {
		return nil, err
	}
	a, err := s.accounts.ByName(ctx, orgID, accountName)
	if err != nil {
		return nil, err
	}
	providerID, err := s.provider.CreateCatalog(ctx, a.Creds(), name)
	if err != nil {
		return nil, providerError("creating the catalog", err)
	}
	var ret idRow
	err = s.db.WithContext(ctx).Raw(`INSERT INTO catalogs (id, organization_id, account_id, provider_catalog_id, name)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (account_id, provider_catalog_id) DO UPDATE SET name = EXCLUDED.name, is_active = true, updated_at = now()
		RETURNING id`, uuid.New(), orgID, a.ID, providerID, name).Scan(&ret).Error
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, ret.ID)
}

// DeleteCatalog deletes a catalog at the provider (its products with it),
// then here. A catalog the provider no longer has is deleted here all the
// same: the provider's 404 means it is already gone.
func (s *Service) DeleteCatalog(ctx context.Context, orgID, id uuid.UUID) error {
	c, err := tenant.Get[models.Catalog](ctx, s.db, orgID, id, msgCatalogNotFound)
	if err != nil {
		return err
	}
	a, err := s.accounts.Get(ctx, orgID, c.AccountID)
	if err != nil {
		return err
	}
	if err := s.provider.DeleteObject(ctx, a.Creds(), c.ProviderCatalogID); err != nil && !platform.IsUnknownObject(err) {
		return providerError("deleting the catalog", err)
	}
	return s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.Catalog{}, "id = ?", id).Error
}

// CreateProduct adds a product to the catalog at the provider, then here.
// The provider requires a retailer id; without one the product's own id
// is used.
func (s *Service) CreateProduct(ctx context.Context, orgID, catalogID uuid.UUID, in ProductInput) (*models.Product, error) {
	c, err := tenant.Get[models.Catalog](ctx, s.db, orgID, catalogID, msgCatalogNotFound)
	if err != nil {
		return nil, err
	}
	f, err := in.apply(productFields{currency: DefaultCurrency}, true)
	if err != nil {
		return nil, err
	}
	id := uuid.New()
	if f.retailerID == "" {
		f.retailerID = id.String()
	}
	a, err := s.accounts.Get(ctx, orgID, c.AccountID)
	if err != nil {
		return nil, err
	}
	providerID, err := s.provider.CreateProduct(ctx, a.Creds(), c.ProviderCatalogID, f.platform())
	if err != nil {
		return nil, providerError("creating the product", err)
	}
	var ret idRow
	err = s.db.WithContext(ctx).Raw(`INSERT INTO products (id, organization_id, catalog_id, provider_product_id, name, description,
			price, currency, url, image_url, retailer_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (catalog_id, provider_product_id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description,
			price = EXCLUDED.price, currency = EXCLUDED.currency, url = EXCLUDED.url, image_url = EXCLUDED.image_url,
			retailer_id = EXCLUDED.retailer_id, is_active = true, updated_at = now()
		RETURNING id`, id, orgID, c.ID, providerID, f.name, f.description, f.price, f.currency, f.url, f.imageURL, f.retailerID).
		Scan(&ret).Error
	if err != nil {
		return nil, err
	}
	return s.Product(ctx, orgID, ret.ID)
}

// UpdateProduct sends the fields that change to the provider, then stores
// them. Nothing to change calls nothing. The product's row is locked while
// the provider answers, so two updates never compute their changes from
// the same old values.
func (s *Service) UpdateProduct(ctx context.Context, orgID, id uuid.UUID, in ProductInput) (*models.Product, error) {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		p, err := tenant.Get[models.Product](ctx, tx.Clauses(forUpdate), orgID, id, msgProductNotFound)
		if err != nil {
			return err
		}
		cur := fieldsOf(p)
		next, err := in.apply(cur, false)
		if err != nil {
			return err
		}
		change, columns := diff(cur, next)
		if len(columns) == 0 {
			return nil
		}
		a, err := s.accountOf(ctx, tx, orgID, p.CatalogID)
		if err != nil {
			return err
		}
		if err := s.provider.UpdateProduct(ctx, a.Creds(), p.ProviderProductID, change); err != nil {
			return providerError("updating the product", err)
		}
		columns["updated_at"] = s.now()
		return tx.Model(p).Updates(columns).Error
	})
	if err != nil {
		return nil, err
	}
	return s.Product(ctx, orgID, id)
}

// DeleteProduct deletes a product at the provider, then here; a product the
// provider no longer has is deleted here all the same.
func (s *Service) DeleteProduct(ctx context.Context, orgID, id uuid.UUID) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		p, err := tenant.Get[models.Product](ctx, tx.Clauses(forUpdate), orgID, id, msgProductNotFound)
		if err != nil {
			return err
		}
		a, err := s.accountOf(ctx, tx, orgID, p.CatalogID)
		if err != nil {
			return err
		}
		if err := s.provider.DeleteObject(ctx, a.Creds(), p.ProviderProductID); err != nil && !platform.IsUnknownObject(err) {
			return providerError("deleting the product", err)
		}
		return tx.Delete(p).Error
	})
}

// accountOf opens the account of a catalog.
func (s *Service) accountOf(ctx context.Context, tx *gorm.DB, orgID, catalogID uuid.UUID) (*accounts.Account, error) {
	c, err := tenant.Get[models.Catalog](ctx, tx, orgID, catalogID, msgCatalogNotFound)
	if err != nil {
		return nil, err
	}
	return s.accounts.Get(ctx, orgID, c.AccountID)
}

func fieldsOf(p *models.Product) productFields {
	return productFields{name: p.Name, description: p.Description, price: p.Price, currency: strings.TrimSpace(p.Currency), url: p.URL,
		imageURL: p.ImageURL, retailerID: p.RetailerID}
}

// platform is the product as the provider takes it.
func (f productFields) platform() platform.Product {
	return platform.Product{RetailerID: f.retailerID, Name: f.name, Description: f.description, Price: f.price, Currency: f.currency,
		ImageURL: f.imageURL, URL: f.url}
}

// diff answers what changed from cur to next: as the provider's update
// (only those fields set) and as the columns to update here.
func diff(cur, next productFields) (platform.Product, map[string]any) {
	var p platform.Product
	cols := map[string]any{}
	set := func(changed bool, col string, v any, apply func()) {
		if changed {
			cols[col] = v
			apply()
		}
	}
	set(cur.name != next.name, "name", next.name, func() { p.Name = next.name })
	set(cur.description != next.description, "description", next.description, func() { p.Description = next.description })
	set(cur.price != next.price, "price", next.price, func() { p.Price = next.price })
	set(cur.currency != next.currency, "currency", next.currency, func() { p.Currency = next.currency })
	set(cur.url != next.url, "url", next.url, func() { p.URL = next.url })
	set(cur.imageURL != next.imageURL, "image_url", next.imageURL, func() { p.ImageURL = next.imageURL })
	set(cur.retailerID != next.retailerID, "retailer_id", next.retailerID, func() { p.RetailerID = next.retailerID })
	return p, cols
}
