package dataops

import (
	"context"
	"strings"
	"testing"

	"gorm.io/gorm"

	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// The export's cursor walks contacts_org_created in the export's order, so
// the first batch comes without sorting the organization's contacts first,
// also when they were all written at once and share created_at (an
// import): the index's key ends with id, the order's tiebreaker.
func TestExportCursorNeedsNoSort(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	if err := f.DB.Exec(`INSERT INTO contacts (organization_id, phone_number, name)
		SELECT ?, '+1555040' || lpad(i::text, 4, '0'), 'C' || i FROM generate_series(0, 4999) AS i`, org.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Exec(`ANALYZE contacts`).Error; err != nil {
		t.Fatal(err)
	}
	s := NewService(Deps{DB: f.DB, Maskers: orgsettings.NewService(f.DB, f.Box, nil, nil)})
	exp, err := s.PrepareExport(context.Background(), org.ID, ExportRequest{Table: "contacts"})
	if err != nil {
		t.Fatal(err)
	}
	query, args := exp.query()
	var plan []string
	err = f.DB.Transaction(func(tx *gorm.DB) error {
		return tx.Raw("EXPLAIN DECLARE plan_check NO SCROLL CURSOR FOR "+query, args...).Scan(&plan).Error
	})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(plan[0], "Sort") || !strings.Contains(text, "contacts_org_created") {
		t.Fatalf("the export's cursor sorts or misses contacts_org_created:\n%s", text)
	}
}
