package platform

import (
	"context"
	"net/url"
	"strconv"
)

// Catalog is a product catalog at the provider.
type Catalog struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ProductCount int    `json:"product_count"`
}

// Product is a catalog item; Price is in the currency's smallest unit. Zero
// fields are not sent, so an update carries only what changed.
type Product struct {
	ID          string `json:"id,omitempty"`
	RetailerID  string `json:"retailer_id,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Price       int64  `json:"price,omitempty"`
	Currency    string `json:"currency,omitempty"`
	ImageURL    string `json:"image_url,omitempty"`
	URL         string `json:"url,omitempty"`
}

// Paging is the provider's cursor paging of a list.
type Paging struct {
	Cursors struct {
		Before string `json:"before"`
		After  string `json:"after"`
	} `json:"cursors"`
	Next string `json:"next"`
}

// more reports whether a page of n items has a next page, and its cursor.
func (p Paging) more(n int) (string, bool) {
	return p.Cursors.After, p.Next != "" && p.Cursors.After != "" && n > 0
}

// CatalogPage is one page of a business's catalogs.
type CatalogPage struct {
	Data   []Catalog `json:"data"`
	Paging Paging    `json:"paging"`
}

// ProductPage is one page of a catalog's products.
type ProductPage struct {
	Data   []Product `json:"data"`
	Paging Paging    `json:"paging"`
}

// productFields are the fields a product list asks for: the provider
// answers only ids without them.
const productFields = "id,retailer_id,name,description,price,currency,image_url,url"

// CreateCatalog creates a catalog owned by the account's business (the
// business account id stands for the business).
func (c *Client) CreateCatalog(ctx context.Context, cr Creds, name string) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := c.postJSON(ctx, cr.AccessToken, cr.BusinessAccountID+"/owned_product_catalogs", map[string]string{"name": name}, &out)
	return out.ID, err
}

// ListCatalogs returns one page of the business's catalogs after the cursor.
func (c *Client) ListCatalogs(ctx context.Context, cr Creds, after string, limit int) (*CatalogPage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}, "fields": {"id,name,product_count"}}
	if after != "" {
		q.Set("after", after)
	}
	var out CatalogPage
	return &out, c.getJSON(ctx, cr.AccessToken, cr.BusinessAccountID+"/owned_product_catalogs", q, &out)
}

// AllCatalogs follows the paging to the end.
func (c *Client) AllCatalogs(ctx context.Context, cr Creds) ([]Catalog, error) {
	var all []Catalog
	after := ""
	for {
		page, err := c.ListCatalogs(ctx, cr, after, 100)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		next, ok := page.Paging.more(len(page.Data))
		if !ok {
			return all, nil
		}
		after = next
	}
}

// CreateProduct adds a product to a catalog.
func (c *Client) CreateProduct(ctx context.Context, cr Creds, catalogID string, p Product) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	p.ID = ""
	err := c.postJSON(ctx, cr.AccessToken, catalogID+"/products", p, &out)
	return out.ID, err
}

// ListProducts returns one page of a catalog's products after the cursor.
func (c *Client) ListProducts(ctx context.Context, cr Creds, catalogID, after string, limit int) (*ProductPage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}, "fields": {productFields}}
	if after != "" {
		q.Set("after", after)
	}
	var out ProductPage
	return &out, c.getJSON(ctx, cr.AccessToken, catalogID+"/products", q, &out)
}

// AllProducts follows the paging of a catalog's products to the end.
func (c *Client) AllProducts(ctx context.Context, cr Creds, catalogID string) ([]Product, error) {
	var all []Product
	after := ""
	for {
		page, err := c.ListProducts(ctx, cr, catalogID, after, 100)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		next, ok := page.Paging.more(len(page.Data))
		if !ok {
			return all, nil
		}
		after = next
	}
}

// UpdateProduct changes the given (non-zero) fields of a product.
func (c *Client) UpdateProduct(ctx context.Context, cr Creds, productID string, p Product) error {
	var out successResp
	p.ID = ""
	return c.postJSON(ctx, cr.AccessToken, productID, p, &out)
}

// DeleteObject deletes a catalog (with its products) or a product.
func (c *Client) DeleteObject(ctx context.Context, cr Creds, id string) error {
	return c.delete(ctx, cr.AccessToken, id, nil)
}

// IsUnknownObject reports whether err is the provider's answer for an id it
// does not have (or no longer has): HTTP 404, or code 100 with subcode 33.
func IsUnknownObject(err error) bool {
	pe, ok := AsError(err)
	return ok && (pe.HTTPStatus == 404 || (pe.Code == 100 && pe.Subcode == 33))
}
