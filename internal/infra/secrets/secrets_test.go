package secrets_test

import (
	"bytes"
	"errors"
	"testing"

	"wharf/internal/infra/secrets"
)

func TestSealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	box, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := box.SealString("token")
	b, _ := box.SealString("token")
	if bytes.Equal(a, b) || bytes.Contains(a, []byte("token")) {
		t.Fatal("ciphertext is deterministic or contains the plaintext")
	}
	if got, err := box.OpenString(a); err != nil || got != "token" {
		t.Fatalf("open: %q %v", got, err)
	}
	a[len(a)-1] ^= 1
	if _, err := box.Open(a); !errors.Is(err, secrets.ErrDecrypt) {
		t.Fatalf("tampered ciphertext: %v", err)
	}
	other, _ := secrets.New(bytes.Repeat([]byte{8}, 32))
	if _, err := other.Open(b); !errors.Is(err, secrets.ErrDecrypt) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, err := secrets.New([]byte("short")); err == nil {
		t.Fatal("short key accepted")
	}
}
