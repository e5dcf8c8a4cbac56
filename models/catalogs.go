package models

import (
	"time"

	"github.com/google/uuid"
)

// Catalog is a product catalog of an account's business at the provider,
// mirrored here.
type Catalog struct {
	ID                uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID    uuid.UUID `gorm:"type:uuid"`
	AccountID         uuid.UUID `gorm:"type:uuid"`
	ProviderCatalogID string
	Name              string
	IsActive          bool
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// Product is an item of a catalog; Price is in the currency's smallest unit.
type Product struct {
	ID                uuid.UUID `gorm:"type:uuid;primaryKey;default:gen_random_uuid()"`
	OrganizationID    uuid.UUID `gorm:"type:uuid"`
	CatalogID         uuid.UUID `gorm:"type:uuid"`
	ProviderProductID string
	Name              string
	Description       string
	Price             int64
	Currency          string
	URL               string `gorm:"column:url"`
	ImageURL          string `gorm:"column:image_url"`
	RetailerID        string
	IsActive          bool
	CreatedAt         time.Time
	UpdatedAt         time.Time
}
