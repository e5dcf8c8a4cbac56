// Package catalogsapi is the HTTP surface of product catalogs and their
// products (/api/catalogs, /api/products): reads from the local mirror,
// changes that the catalogs domain makes at the provider first, and the
// sync of what the provider holds.
package catalogsapi

import "wharf/internal/catalogs"

// Handlers serves the catalogs and products routes.
type Handlers struct {
	catalogs *catalogs.Service
}

// New builds the catalogs handlers.
func New(c *catalogs.Service) *Handlers { return &Handlers{catalogs: c} }
