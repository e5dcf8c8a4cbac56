package catalogsapi

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/catalogs"
	"wharf/models"
)

type listQuery struct {
	PlatformAccount string `query:"platform_account" description:"Only the catalogs of the account with this name (an unknown name is a 400)."`
}

type catalogResp struct {
	ID                uuid.UUID `json:"id"`
	ProviderCatalogID string    `json:"provider_catalog_id"`
	PlatformAccount   string    `json:"platform_account" description:"The name of the account whose business owns the catalog."`
	Name              string    `json:"name"`
	IsActive          bool      `json:"is_active" description:"False once a sync no longer found the catalog at the provider."`
	ProductCount      int64     `json:"product_count" description:"Active products."`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// catalogDetail is a catalog with its products.
type catalogDetail struct {
	catalogResp
	Products []productResp `json:"products"`
}

func toCatalogResp(c *catalogs.Catalog) catalogResp {
	return catalogResp{ID: c.ID, ProviderCatalogID: c.ProviderCatalogID, PlatformAccount: c.PlatformAccount, Name: c.Name,
		IsActive: c.IsActive, ProductCount: c.ProductCount, CreatedAt: web.UTC(c.CreatedAt), UpdatedAt: web.UTC(c.UpdatedAt)}
}

type listResp struct {
	Catalogs []catalogResp `json:"catalogs"`
}

type productResp struct {
	ID                uuid.UUID `json:"id"`
	CatalogID         uuid.UUID `json:"catalog_id"`
	ProviderProductID string    `json:"provider_product_id"`
	Name              string    `json:"name"`
	Description       string    `json:"description"`
	Price             int64     `json:"price" description:"In the currency's smallest unit (1999 is 19.99 USD)."`
	Currency          string    `json:"currency" description:"ISO 4217 code."`
	URL               string    `json:"url"`
	ImageURL          string    `json:"image_url"`
	RetailerID        string    `json:"retailer_id"`
	IsActive          bool      `json:"is_active" description:"False once a sync no longer found the product at the provider."`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

func toProductResp(p *models.Product) productResp {
	return productResp{ID: p.ID, CatalogID: p.CatalogID, ProviderProductID: p.ProviderProductID, Name: p.Name, Description: p.Description,
		Price: p.Price, Currency: strings.TrimSpace(p.Currency), URL: p.URL, ImageURL: p.ImageURL, RetailerID: p.RetailerID,
		IsActive: p.IsActive, CreatedAt: web.UTC(p.CreatedAt), UpdatedAt: web.UTC(p.UpdatedAt)}
}

func toProducts(ps []models.Product) []productResp {
	out := make([]productResp, len(ps))
	for i := range ps {
		out[i] = toProductResp(&ps[i])
	}
	return out
}

type productsResp struct {
	Products []productResp `json:"products"`
}

type createCatalogRequest struct {
	PlatformAccount string `json:"platform_account" description:"The name of one of the organization's accounts (required)."`
	Name            string `json:"name"`
}

type syncRequest struct {
	PlatformAccount string `json:"platform_account" description:"The name of one of the organization's accounts (required)."`
}

type syncResp struct {
	Message string `json:"message"`
	Synced  int    `json:"synced" description:"Catalogs created or changed here (renamed, marked active or inactive, or with products created, changed or marked inactive)."`
	Total   int    `json:"total" description:"Catalogs the provider listed."`
}

// productRequest creates or changes a product. price is kept raw so that
// a decimal or a string is refused with a message saying what is expected
// rather than a JSON type error.
type productRequest struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Price       json.RawMessage `json:"price" rawtype:"integer" description:"A JSON integer in the currency's smallest unit (1999 for 19.99): above 0 on create; on update applied only when above 0. Decimals and strings are refused."`
	Currency    *string         `json:"currency" description:"ISO 4217 code; USD when absent on create."`
	URL         *string         `json:"url" description:"http or https URL."`
	ImageURL    *string         `json:"image_url" description:"http or https URL."`
	RetailerID  *string         `json:"retailer_id" description:"The shop's own id (unique in the catalog at the provider); the product's id when absent on create."`
}

func (r productRequest) input() (catalogs.ProductInput, error) {
	price, err := catalogs.ParsePrice(r.Price)
	if err != nil {
		return catalogs.ProductInput{}, err
	}
	return catalogs.ProductInput{Name: r.Name, Description: r.Description, Price: price, Currency: r.Currency, URL: r.URL,
		ImageURL: r.ImageURL, RetailerID: r.RetailerID}, nil
}
