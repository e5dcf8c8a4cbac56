package storage_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"wharf/internal/infra/storage"
)

func TestLocalStore(t *testing.T) {
	s, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Put(ctx, "orgs/a/audio/x.ogg", strings.NewReader("data")); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Open(ctx, "orgs/a/audio/x.ogg")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "data" {
		t.Fatalf("read %q", b)
	}
	for _, bad := range []string{"../x", "a/../../x", "/abs", "", "a//b", `a\b`} {
		if _, err := s.Put(ctx, bad, strings.NewReader("x")); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
	if err := s.Delete(ctx, "orgs/a/audio/x.ogg"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "orgs/a/audio/x.ogg"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := s.Delete(ctx, "orgs/a/audio/x.ogg"); err != nil {
		t.Fatal("deleting a missing key must not fail")
	}
}
