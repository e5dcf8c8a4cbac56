// Package secrets encrypts secrets at rest (provider access tokens, app
// secrets, registration PINs, webhook secrets) with AES-256-GCM.
//
// The stored form is nonce || ciphertext || tag. A random 96-bit nonce per
// message is safe for far more messages than this service will ever encrypt
// under one key.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// Box encrypts and decrypts with one key.
type Box struct {
	aead cipher.AEAD
}

// New builds a Box from a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("encryption key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext.
func (b *Box) Seal(plaintext []byte) ([]byte, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return b.aead.Seal(nonce, nonce, plaintext, nil), nil
}

// SealString encrypts a string.
func (b *Box) SealString(s string) ([]byte, error) { return b.Seal([]byte(s)) }

// ErrDecrypt is returned for ciphertext that was altered or sealed under
// another key.
var ErrDecrypt = errors.New("secrets: cannot decrypt (wrong key or corrupted data)")

// Open decrypts what Seal produced.
func (b *Box) Open(sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrDecrypt
	}
	out, err := b.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return nil, ErrDecrypt
	}
	return out, nil
}

// OpenString decrypts to a string.
func (b *Box) OpenString(sealed []byte) (string, error) {
	out, err := b.Open(sealed)
	return string(out), err
}
