package storage

// Config chooses and configures the store of a process.
type Config struct {
	// Dir is the local store's root (STORAGE_DIR), used when S3 is not
	// configured.
	Dir string
	// S3 is used when its Endpoint is set.
	S3 S3Config
	// SigningKey and PublicURL let the local store sign URLs for the api's
	// /api/files route; without them a local SignedURL fails with
	// ErrNoSigning (processes that only write files need neither).
	SigningKey []byte
	PublicURL  string
}

// UsesS3 reports whether the configuration names an S3 endpoint.
func (c Config) UsesS3() bool { return c.S3.Endpoint != "" }

// New builds the configured store: S3 when an endpoint is set, else a
// local directory.
func New(c Config) (Store, error) {
	if c.UsesS3() {
		return NewS3(c.S3)
	}
	var opts []Option
	if c.SigningKey != nil {
		opts = append(opts, WithSigning(c.SigningKey, c.PublicURL))
	}
	return NewLocal(c.Dir, opts...)
}
