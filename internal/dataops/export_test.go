package dataops_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"testing"

	"wharf/internal/dataops"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// An export longer than one cursor batch comes out whole, in order, once
// per contact, and only the organization's; the defaults are the spec's.
func TestExportStreamsEveryRowInBatches(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	org, other := f.Org(), f.Org()
	const n = 2500 // more than two FETCHes
	if err := f.DB.Exec(`INSERT INTO contacts (organization_id, phone_number, name, created_at)
		SELECT ?, '+1555030' || lpad(i::text, 4, '0'), 'C' || i, now() + i * interval '1 second' FROM generate_series(0, ? - 1) AS i`,
		org.ID, n).Error; err != nil {
		t.Fatal(err)
	}
	f.Contact(other.ID, nil)
	s := dataops.NewService(dataops.Deps{DB: f.DB, Maskers: orgsettings.NewService(f.DB, f.Box, nil, nil)})
	exp, err := s.PrepareExport(context.Background(), org.ID, dataops.ExportRequest{Table: "contacts", Columns: []string{"profile_name"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := exp.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n+1 || rows[0][0] != "Name" {
		t.Fatalf("%d rows (header %v), want %d and the header", len(rows), rows[0], n+1)
	}
	for i, r := range rows[1:] {
		if r[0] != fmt.Sprintf("C%d", i) {
			t.Fatalf("row %d is %q", i+1, r[0])
		}
	}
}
