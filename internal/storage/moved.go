// Package storage moved to internal/infra/storage. These names stay at the
// old path for test suites written against it; new code imports the new
// path.
package storage

import "wharf/internal/infra/storage"

type (
	// Config is storage.Config.
	Config = storage.Config
	// Store is storage.Store.
	Store = storage.Store
	// Local is storage.Local.
	Local = storage.Local
)

// New is storage.New.
func New(c Config) (Store, error) { return storage.New(c) }

// DeriveSigningKey is storage.DeriveSigningKey.
func DeriveSigningKey(master []byte) []byte { return storage.DeriveSigningKey(master) }
