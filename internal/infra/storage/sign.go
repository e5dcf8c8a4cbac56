package storage

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// signingLabel separates the URL signing key from every other use of
// ENCRYPTION_KEY: a new use takes a new label, never this one.
const signingLabel = "wharf storage url signing v1"

// DeriveSigningKey derives the local URL signing secret from the master
// key (ENCRYPTION_KEY) with HKDF-SHA256 and a label of its own. Deriving it
// rather than adding a variable means every api replica (and the worker)
// signs alike with no new secret to distribute, and a signature reveals
// nothing usable against the encryption key.
func DeriveSigningKey(master []byte) []byte {
	k, err := hkdf.Key(sha256.New, master, nil, signingLabel, 32)
	if err != nil {
		panic(err) // only for a length past 255*32 bytes
	}
	return k
}

// SignedURL is <baseURL>/api/files/<key>?expires=<unix>&signature=<hex>,
// valid until the returned expiry (now+ttl, rounded down to the second).
// The file need not exist yet: the route answers 404 until it does.
func (l *Local) SignedURL(_ context.Context, key string, ttl time.Duration) (string, time.Time, error) {
	ttl, err := checkTTL(ttl)
	if err != nil {
		return "", time.Time{}, err
	}
	expires := time.Unix(time.Now().Add(ttl).Unix(), 0)
	u, err := l.SignURL(key, expires)
	return u, expires, err
}

// SignURL signs key for any expiry, past ones included: SignedURL's
// building block, and how a test makes an expired link without waiting.
func (l *Local) SignURL(key string, expires time.Time) (string, error) {
	if l.secret == nil {
		return "", ErrNoSigning
	}
	if err := checkKey(key); err != nil {
		return "", err
	}
	exp := strconv.FormatInt(expires.Unix(), 10)
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	q := url.Values{"expires": {exp}, "signature": {hex.EncodeToString(l.mac(key, exp))}}
	return l.baseURL + "/api/files/" + strings.Join(segs, "/") + "?" + q.Encode(), nil
}

// Verify checks a local URL's parameters as the route received them: the
// signature must be this server's over exactly this key and expires
// (ErrBadSignature otherwise, compared in constant time), and now must be
// before the expiry (ErrExpired). The signature is checked first, so that a
// changed expiry is reported as tampering, not as expired or valid.
func (l *Local) Verify(key, expires, signature string, now time.Time) error {
	if l.secret == nil {
		return ErrNoSigning
	}
	sig, err := hex.DecodeString(signature)
	if err != nil || checkKey(key) != nil || !hmac.Equal(sig, l.mac(key, expires)) {
		return ErrBadSignature
	}
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil {
		return ErrBadSignature // cannot be: we signed it
	}
	if !now.Before(time.Unix(exp, 0)) {
		return ErrExpired
	}
	return nil
}

// mac is HMAC-SHA256(secret, key + "\n" + expires): the newline keeps
// key "a1" with expiry "23" apart from key "a" with expiry "123".
func (l *Local) mac(key, expires string) []byte {
	m := hmac.New(sha256.New, l.secret)
	m.Write([]byte(key + "\n" + expires))
	return m.Sum(nil)
}
