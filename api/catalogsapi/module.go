package catalogsapi

import (
	"wharf/internal/catalogs"
	"wharf/module"
)

// Module is the catalogs' share of the processes: routes.
func Module(c *catalogs.Service) module.Module {
	return module.Module{Tag: "Catalogs and products", Routes: New(c).Routes()}
}
