package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"

	"wharf/internal/infra/apperr"
)

// Password rules: the spec's minimum, and a maximum that bounds the work an
// attacker can make one login do.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 256
)

// argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes, 1 lane).
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// ValidatePassword checks the length rules; field names the request field in
// the message.
func ValidatePassword(field, pw string) error {
	if len(pw) < MinPasswordLen {
		return apperr.Invalidf("%s must be at least %d characters", field, MinPasswordLen)
	}
	if len(pw) > MaxPasswordLen {
		return apperr.Invalidf("%s must be at most %d characters", field, MaxPasswordLen)
	}
	return nil
}

// HashPassword returns a PHC-format argon2id hash.
func HashPassword(pw string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword reports whether pw matches a hash made by HashPassword. The
// parameters are read from the hash, so raising them later keeps old hashes
// valid.
func VerifyPassword(hash, pw string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err := errors.Join(err1, err2); err != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// acquireHashSlot waits for one of the Service's argon2 slots, or for ctx to
// end; release must be called when it returns nil.
func (s *Service) acquireHashSlot(ctx context.Context) (release func(), err error) {
	select {
	case s.hashSlots <- struct{}{}:
		s.hashes.Add(1)
		return func() { <-s.hashSlots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hashPassword is HashPassword within the Service's concurrency bound.
func (s *Service) hashPassword(ctx context.Context, pw string) (string, error) {
	release, err := s.acquireHashSlot(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return HashPassword(pw)
}

// verifyPassword is VerifyPassword within the Service's concurrency bound.
func (s *Service) verifyPassword(ctx context.Context, hash, pw string) (bool, error) {
	release, err := s.acquireHashSlot(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return VerifyPassword(hash, pw), nil
}

// dummyHash is verified against when a login names an unknown email, so that
// the response time does not tell which of email or password was wrong.
var dummyHash = sync.OnceValue(func() string {
	h, err := HashPassword("not-a-real-password-just-for-timing")
	if err != nil {
		panic(err) // only fails when the system has no randomness
	}
	return h
})
