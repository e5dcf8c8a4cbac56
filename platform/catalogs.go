package platform

import "context"

// Catalog is a product catalog at the provider.
type Catalog struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ProductCount int    `json:"product_count"`
}

// Product is a catalog item; Price is in the currency's smallest unit.
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

// CreateCatalog creates a catalog owned by the business.
func (c *Client) CreateCatalog(ctx context.Context, token, businessID, name string) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := c.postJSON(ctx, token, businessID+"/owned_product_catalogs", map[string]string{"name": name}, &out)
	return out.ID, err
}

// ListCatalogs lists the business's catalogs.
func (c *Client) ListCatalogs(ctx context.Context, token, businessID string) ([]Catalog, error) {
	var out struct {
		Data []Catalog `json:"data"`
	}
	return out.Data, c.getJSON(ctx, token, businessID+"/owned_product_catalogs", nil, &out)
}

// CreateProduct adds a product to a catalog.
func (c *Client) CreateProduct(ctx context.Context, token, catalogID string, p Product) (string, error) {
	var out struct {
		ID string `json:"id"`
	}
	err := c.postJSON(ctx, token, catalogID+"/products", p, &out)
	return out.ID, err
}

// ListProducts lists a catalog's products.
func (c *Client) ListProducts(ctx context.Context, token, catalogID string) ([]Product, error) {
	var out struct {
		Data []Product `json:"data"`
	}
	return out.Data, c.getJSON(ctx, token, catalogID+"/products", nil, &out)
}

// UpdateProduct changes the given (non-empty) fields of a product.
func (c *Client) UpdateProduct(ctx context.Context, token, productID string, p Product) error {
	var out successResp
	return c.postJSON(ctx, token, productID, p, &out)
}

// DeleteObject deletes a catalog or a product.
func (c *Client) DeleteObject(ctx context.Context, token, id string) error {
	return c.delete(ctx, token, id, nil)
}
