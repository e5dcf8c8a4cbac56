package tenant_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/database"
	"wharf/internal/infra/tenant"
	"wharf/internal/testenv"
	"wharf/models"
)

// Get answers the same NotFound for a missing id and for another
// organization's row, and never a gorm error.
func TestGetIsScopedToTheOrganization(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, testenv.DatabaseURL(t), testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { database.Close(db) })
	mine, theirs := uuid.New(), uuid.New()
	tag := uuid.New()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO organizations (id, name, slug) VALUES (?, 'mine', ?), (?, 'theirs', ?)`, []any{mine, mine.String(), theirs, theirs.String()}},
		{`INSERT INTO tags (id, organization_id, name) VALUES (?, ?, 'vip')`, []any{tag, theirs}},
	} {
		if err := db.Exec(q.sql, q.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	got, err := tenant.Get[models.Tag](ctx, db, theirs, tag, "tag not found")
	if err != nil || got.Name != "vip" {
		t.Fatalf("own row: %v, %+v", err, got)
	}
	for name, id := range map[string]uuid.UUID{"another organization's row": tag, "a missing row": uuid.New()} {
		_, err := tenant.Get[models.Tag](ctx, db, mine, id, "tag not found")
		if !apperr.Is(err, apperr.NotFound) || err.Error() != "tag not found" {
			t.Errorf("%s: %v, want NotFound \"tag not found\"", name, err)
		}
	}
}
