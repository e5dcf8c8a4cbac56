// Package storage keeps uploaded and generated files (hold music, ringback
// tones, call recordings, later media) under opaque keys.
//
// Two stores implement Store: Local, a directory on local disk (the
// default), whose signed URLs the api serves itself at /api/files/<key>; and
// S3, any S3-compatible object store (AWS S3, MinIO, R2...) through
// minio-go, whose signed URLs are presigned GETs served by the store. New
// chooses between them from the configuration.
//
// Keys are slash-separated relative paths chosen by the server, never by
// the client, and are checked so that no key can leave the root (Local) or
// name an odd object (S3).
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Store is what the domains keep files through.
type Store interface {
	// Put writes the whole of r under key, replacing what was there, and
	// returns the number of bytes written.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Open reads the object under key; ErrNotFound when there is none.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Exists reports whether key holds an object.
	Exists(ctx context.Context, key string) (bool, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// SignedURL is a URL that serves the object without credentials until
	// the returned expiry, which is at most ttl from now (ttl is capped at
	// MaxURLTTL).
	SignedURL(ctx context.Context, key string, ttl time.Duration) (string, time.Time, error)
}

// MaxURLTTL is the longest a signed URL lives: S3's limit for presigned
// URLs (SigV4 refuses more), applied to local URLs too so that both stores
// behave alike.
const MaxURLTTL = 7 * 24 * time.Hour

// Errors callers tell apart.
var (
	// ErrNotFound is returned for a missing key.
	ErrNotFound = errors.New("storage: not found")
	// ErrBadSignature: a local URL whose key, expiry or signature was
	// changed, or that was never signed by this server.
	ErrBadSignature = errors.New("storage: invalid signature")
	// ErrExpired: a correctly signed local URL past its expiry.
	ErrExpired = errors.New("storage: link expired")
	// ErrNoSigning: SignedURL or Verify on a Local built without
	// WithSigning.
	ErrNoSigning = errors.New("storage: URL signing is not configured")
)

// checkKey refuses keys that are empty, absolute, not clean (".", "..",
// doubled slashes) or that contain a backslash.
func checkKey(key string) error {
	if key == "" || path.Clean("/"+key) != "/"+key || strings.Contains(key, `\`) {
		return fmt.Errorf("storage: invalid key %q", key)
	}
	return nil
}

// ContentType is the media type a stored file is served with, from its
// key's extension: the audio formats the product stores, else
// application/octet-stream (a browser then downloads rather than renders).
func ContentType(key string) string {
	switch strings.ToLower(path.Ext(key)) {
	case ".ogg", ".opus", ".oga":
		return "audio/ogg"
	case ".wav":
		return "audio/wav"
	case ".mp3":
		return "audio/mpeg"
	case ".pdf":
		return "application/pdf"
	default:
		return "application/octet-stream"
	}
}

// checkTTL validates a signed URL's lifetime and caps it at MaxURLTTL.
func checkTTL(ttl time.Duration) (time.Duration, error) {
	if ttl < time.Second {
		return 0, fmt.Errorf("storage: a signed URL's ttl must be at least 1s, not %s", ttl)
	}
	return min(ttl, MaxURLTTL), nil
}

// Local stores files under a root directory.
type Local struct {
	root string
	// secret and baseURL sign URLs (WithSigning); without them SignedURL
	// and Verify fail with ErrNoSigning.
	secret  []byte
	baseURL string
}

// Option configures a Local.
type Option func(*Local)

// WithSigning lets the store sign URLs that the api serves at
// baseURL/api/files/<key> (baseURL is PUBLIC_URL). secret must be at least
// 32 bytes; DeriveSigningKey makes one from ENCRYPTION_KEY.
func WithSigning(secret []byte, baseURL string) Option {
	return func(l *Local) {
		l.secret = secret
		l.baseURL = strings.TrimRight(baseURL, "/")
	}
}

// NewLocal creates the root directory if needed.
func NewLocal(root string, opts ...Option) (*Local, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	l := &Local{root: abs}
	for _, o := range opts {
		o(l)
	}
	if l.secret != nil && len(l.secret) < 32 {
		return nil, errors.New("storage: the URL signing secret must be at least 32 bytes")
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("storage dir %s: %w", abs, err)
	}
	return l, nil
}

func (l *Local) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Put writes data under key atomically: readers see the old file or the whole
// new one, never a partial write.
func (l *Local) Put(_ context.Context, key string, r io.Reader) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	n, err := io.Copy(tmp, r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	return n, err
}

// Open reads the file under key. The reader is an *os.File, so that the
// file route can seek in it (range requests) and stat it.
func (l *Local) Open(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotFound // a directory is not an object
	}
	return f, nil
}

// Exists reports whether key holds a file.
func (l *Local) Exists(_ context.Context, key string) (bool, error) {
	p, err := l.path(key)
	if err != nil {
		return false, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil && st.Mode().IsRegular(), err
}

// Delete removes key; a missing key is not an error.
func (l *Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
