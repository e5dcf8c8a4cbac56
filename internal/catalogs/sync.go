package catalogs

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/platform"
)

// SyncResult counts what a sync did.
type SyncResult struct {
	// Synced counts the catalogs created or changed here: renamed, marked
	// active or inactive, or with products created, changed or marked
	// inactive.
	Synced int
	// Total counts the catalogs the provider listed.
	Total int
}

// Sync brings the named account's catalogs and their products from the
// provider (every page of both), matched by provider id: new ones are
// created, changed ones updated in place, and none is stored twice, even
// by two syncs at once (upserts on the unique provider-id indexes).
//
// What the provider no longer lists is marked inactive here, not deleted:
// a catalog or product that reappears (a listing that missed it, an object
// restored at the provider) is active again after the next sync, and
// nothing an operator can still see is lost by one bad listing. Products
// the provider reports without a name or a positive price, or in a
// currency this service does not know, are not imported.
//
// Every provider call is made before the transaction, which holds no
// connection while the provider answers; rows are written in provider-id
// order, so concurrent syncs of one account lock them in the same order.
func (s *Service) Sync(ctx context.Context, orgID uuid.UUID, accountName string) (*SyncResult, error) {
	if strings.TrimSpace(accountName) == "" {
		return nil, apperr.Invalidf("platform_account is required (the name of one of the organization's accounts)")
	}
	a, err := s.accounts.ByName(ctx, orgID, accountName)
	if err != nil {
		return nil, err
	}
	cr := a.Creds()
	listed, err := s.provider.AllCatalogs(ctx, cr)
	if err != nil {
		return nil, providerError("listing the catalogs", err)
	}
	listed = uniqueByID(listed, func(c platform.Catalog) string { return c.ID })
	res := &SyncResult{Total: len(listed)}
	products := make(map[string][]platform.Product, len(listed))
	for _, c := range listed {
		ps, err := s.provider.AllProducts(ctx, cr, c.ID)
		if platform.IsUnknownObject(err) {
			continue // deleted since the listing: marked inactive below
		}
		if err != nil {
			return nil, providerError("listing the products of catalog "+c.ID, err)
		}
		products[c.ID] = uniqueByID(ps, func(p platform.Product) string { return p.ID })
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		present := []string{}
		for _, c := range listed {
			ps, ok := products[c.ID]
			if !ok || strings.TrimSpace(c.Name) == "" || c.ID == "" {
				continue
			}
			present = append(present, c.ID)
			changed, err := s.syncCatalog(tx, orgID, a.ID, c, ps)
			if err != nil {
				return err
			}
			if changed {
				res.Synced++
			}
		}
		q := tx.Exec(`UPDATE catalogs SET is_active = false, updated_at = now()
			WHERE account_id = ? AND is_active AND NOT (provider_catalog_id = ANY (string_to_array(?, ',')))`,
			a.ID, strings.Join(present, ","))
		res.Synced += int(q.RowsAffected)
		return q.Error
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// syncCatalog upserts one listed catalog and its products; changed tells
// whether anything of it was written.
func (s *Service) syncCatalog(tx *gorm.DB, orgID, accountID uuid.UUID, c platform.Catalog, ps []platform.Product) (bool, error) {
	q := tx.Exec(`INSERT INTO catalogs (organization_id, account_id, provider_catalog_id, name) VALUES (?, ?, ?, ?)
		ON CONFLICT (account_id, provider_catalog_id) DO UPDATE SET name = EXCLUDED.name, is_active = true, updated_at = now()
		WHERE catalogs.name IS DISTINCT FROM EXCLUDED.name OR NOT catalogs.is_active`,
		orgID, accountID, c.ID, strings.TrimSpace(c.Name))
	if q.Error != nil {
		return false, q.Error
	}
	changed := q.RowsAffected > 0
	var ret idRow
	if err := tx.Raw(`SELECT id FROM catalogs WHERE account_id = ? AND provider_catalog_id = ?`, accountID, c.ID).Scan(&ret).Error; err != nil {
		return false, err
	}
	catalogID := ret.ID
	present := []string{}
	for _, p := range ps {
		f, ok := importable(p)
		if !ok {
			continue
		}
		present = append(present, p.ID)
		q := tx.Exec(`INSERT INTO products (organization_id, catalog_id, provider_product_id, name, description, price, currency, url,
				image_url, retailer_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (catalog_id, provider_product_id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description,
				price = EXCLUDED.price, currency = EXCLUDED.currency, url = EXCLUDED.url, image_url = EXCLUDED.image_url,
				retailer_id = EXCLUDED.retailer_id, is_active = true, updated_at = now()
			WHERE (products.name, products.description, products.price, products.currency, products.url, products.image_url,
					products.retailer_id, products.is_active)
				IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.description, EXCLUDED.price, EXCLUDED.currency, EXCLUDED.url,
					EXCLUDED.image_url, EXCLUDED.retailer_id, true)`,
			orgID, catalogID, p.ID, f.name, f.description, f.price, f.currency, f.url, f.imageURL, f.retailerID)
		if q.Error != nil {
			return false, q.Error
		}
		changed = changed || q.RowsAffected > 0
	}
	q = tx.Exec(`UPDATE products SET is_active = false, updated_at = now()
		WHERE catalog_id = ? AND is_active AND NOT (provider_product_id = ANY (string_to_array(?, ',')))`,
		catalogID, strings.Join(present, ","))
	if q.Error != nil {
		return false, q.Error
	}
	return changed || q.RowsAffected > 0, nil
}

// importable turns a listed product into the values stored here, or false
// when it cannot be stored (no name, no positive price, unknown currency).
func importable(p platform.Product) (productFields, bool) {
	f := productFields{name: strings.TrimSpace(p.Name), description: strings.TrimSpace(p.Description), price: p.Price,
		url: strings.TrimSpace(p.URL), imageURL: strings.TrimSpace(p.ImageURL), retailerID: strings.TrimSpace(p.RetailerID)}
	if f.name == "" || f.price <= 0 || p.ID == "" {
		return f, false
	}
	f.currency = DefaultCurrency
	if strings.TrimSpace(p.Currency) != "" {
		c, err := normalizeCurrency(p.Currency)
		if err != nil {
			return f, false
		}
		f.currency = c
	}
	return f, true
}

// uniqueByID drops repeated ids (a listing that shifted between pages) and
// orders by id, the order rows are locked in.
func uniqueByID[T any](in []T, id func(T) string) []T {
	out := slices.Clone(in)
	slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(id(a), id(b)) })
	return slices.CompactFunc(out, func(a, b T) bool { return id(a) == id(b) })
}
