package paging_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/database"
	"wharf/internal/infra/paging"
	"wharf/internal/testenv"
	"wharf/models"
)

// Find and Raw count every row and load the page asked for, in order; a
// page past the end is empty, not nil.
func TestFindAndRawPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := database.Open(ctx, testenv.DatabaseURL(t), testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { database.Close(db) })
	org := uuid.New()
	if err := db.Exec(`INSERT INTO organizations (id, name, slug) VALUES (?, 'o', ?)`, org, org.String()).Error; err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := db.Exec(`INSERT INTO tags (organization_id, name) VALUES (?, ?)`, org, fmt.Sprintf("t%d", i)).Error; err != nil {
			t.Fatal(err)
		}
	}
	names := func(tags []models.Tag) (out []string) {
		for _, t := range tags {
			out = append(out, t.Name)
		}
		return out
	}
	q := db.WithContext(ctx).Model(&models.Tag{}).Where("organization_id = ?", org)
	for _, c := range []struct {
		page int
		want string
	}{{1, "[t0 t1]"}, {2, "[t2 t3]"}, {3, "[t4]"}, {4, "[]"}} {
		pg := paging.Params{Page: c.page, Limit: 2}
		rows, total, err := paging.Find[models.Tag](q, pg, "name")
		if err != nil || total != 5 || fmt.Sprint(names(rows)) != c.want || rows == nil {
			t.Errorf("Find page %d: %v, total %d, %v; want 5, %s", c.page, err, total, names(rows), c.want)
		}
		raw, total, err := paging.Raw[models.Tag](db.WithContext(ctx), `SELECT * FROM tags WHERE organization_id = @org`,
			map[string]any{"org": org}, pg, "name")
		if err != nil || total != 5 || fmt.Sprint(names(raw)) != c.want || raw == nil {
			t.Errorf("Raw page %d: %v, total %d, %v; want 5, %s", c.page, err, total, names(raw), c.want)
		}
	}
}
