package filesapi

import (
	"wharf/internal/infra/storage"
	"wharf/module"
)

// Module is the signed file links' share of the processes: their route.
func Module(store storage.Store) module.Module {
	return module.Module{Tag: "Files", Routes: New(store).Routes()}
}
