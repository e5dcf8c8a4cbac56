package dataops

import (
	"context"
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
)

// ExportRequest is what to export.
type ExportRequest struct {
	Table   string
	Columns []string // nil or empty: the table's default columns
	Search  string
	Tags    []string // contacts having any of these tags
}

// Export is a checked export, ready to stream.
type Export struct {
	s       *Service
	orgID   uuid.UUID
	table   *table
	columns []column
	req     ExportRequest
	mask    orgsettings.Masker
}

// fetchSize is how many rows a cursor FETCH reads at a time.
const fetchSize = 1000

// PrepareExport checks the request (table, columns) before anything is
// written, so that a bad request is a clean 400.
func (s *Service) PrepareExport(ctx context.Context, orgID uuid.UUID, req ExportRequest) (*Export, error) {
	t, err := tableOf(req.Table)
	if err != nil {
		return nil, err
	}
	cols, err := t.pick(req.Columns)
	if err != nil {
		return nil, err
	}
	if req.Table != "contacts" && len(req.Tags) > 0 {
		return nil, apperr.Invalidf("the tags filter applies to contacts only")
	}
	m, err := s.maskers.Masker(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return &Export{s: s, orgID: orgID, table: t, columns: cols, req: req, mask: m}, nil
}

// FileName is the attachment's name: <table>_export_<YYYYMMDDTHHMMSSZ>.csv.
func (e *Export) FileName(now time.Time) string {
	return e.table.name + "_export_" + now.UTC().Format("20060102T150405Z") + ".csv"
}

// WriteTo streams the CSV: the header row of labels, then the rows, read
// through a cursor inside a read-only transaction.
func (e *Export) WriteTo(ctx context.Context, w io.Writer) error {
	out := csv.NewWriter(w)
	header := make([]string, len(e.columns))
	for i, c := range e.columns {
		header[i] = c.label
	}
	if err := out.Write(header); err != nil {
		return err
	}
	query, args := e.query()
	// The driver caches each statement's result columns by its text, and a
	// FETCH's columns are its cursor's: the cursor is named after the
	// columns it returns, so that one FETCH text always means one shape.
	h := fnv.New64a()
	h.Write([]byte(e.table.name + ":" + strings.Join(keysOf(e.columns), ",")))
	cursor := fmt.Sprintf("export_%x", h.Sum64())
	return e.s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET TRANSACTION READ ONLY").Error; err != nil {
			return err
		}
		if err := tx.Exec("DECLARE "+cursor+" NO SCROLL CURSOR FOR "+query, args...).Error; err != nil {
			return err
		}
		for {
			rows, err := tx.Raw(fmt.Sprintf("FETCH %d FROM %s", fetchSize, cursor)).Rows()
			if err != nil {
				return err
			}
			n := 0
			cells := make([]any, len(e.columns))
			ptrs := make([]any, len(e.columns))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			record := make([]string, len(e.columns))
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return err
				}
				for i, c := range e.columns {
					record[i] = SafeCell(e.cell(c, cells[i]))
				}
				if err := out.Write(record); err != nil {
					rows.Close()
					return err
				}
				n++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			out.Flush()
			if err := out.Error(); err != nil {
				return err
			}
			if n < fetchSize {
				return nil
			}
		}
	})
}

// query is the export's SELECT, one expression per column, in a stable
// order, scoped to the organization and filtered. A search follows the
// organization's masking (a number matches only whole when numbers are
// masked), as the contacts list's does.
func (e *Export) query() (string, []any) {
	exprs := make([]string, len(e.columns))
	for i, c := range e.columns {
		exprs[i] = c.expr
	}
	args := []any{e.orgID}
	where := []string{"t.organization_id = ?"}
	if term := strings.TrimSpace(e.req.Search); term != "" {
		cond, condArgs := e.table.search(term, e.mask.Masks())
		where = append(where, cond)
		args = append(args, condArgs...)
	}
	if len(e.req.Tags) > 0 {
		args = append(args, lower(e.req.Tags))
		where = append(where, `EXISTS (SELECT 1 FROM contact_tags ct JOIN tags g ON g.id = ct.tag_id
			WHERE ct.contact_id = t.id AND lower(g.name) IN ?)`)
	}
	return "SELECT " + strings.Join(exprs, ", ") + " FROM " + e.table.from + " WHERE " + strings.Join(where, " AND ") +
		" ORDER BY " + e.table.order, args
}

// cell renders a value: times in RFC 3339 UTC, phone numbers through the
// organization's masker.
func (e *Export) cell(c column, v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		s = x.UTC().Format(time.RFC3339)
	case []byte:
		s = string(x)
	default:
		s = fmt.Sprint(x)
	}
	if c.phone {
		s = e.mask.Phone(s)
	}
	if c.name {
		s = e.mask.Name(s)
	}
	return s
}

// SafeCell defuses a cell a spreadsheet would run as a formula: one that
// starts with =, +, -, @, a tab or a carriage return gets a leading
// single quote, and is otherwise unchanged.
func SafeCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func lower(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
