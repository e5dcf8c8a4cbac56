package docframe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Filter selects stored documents of one DocType by the text of their
// fields, for an integration's own code (no permission check, no DocType
// definition read): the sweeps and schedules that look across
// organizations, and the lookups an integration makes inside a transaction
// it holds. The framework owns its documents table; the integrations ask
// it through Find instead of writing SQL on it.
//
// The conditions are the ones a field index serves ((data ->> 'field')
// compared with text, docframe's field indexes), so a filter on an indexed
// field uses its index as the list queries do.
type Filter struct {
	Doctype string
	// OrganizationID restricts the documents to one organization;
	// uuid.Nil looks across every organization.
	OrganizationID uuid.UUID
	// Equal: the field's text is one of the values. A field with no values
	// matches nothing.
	Equal map[string][]string
	// Blank: the field is absent or "".
	Blank []string
	// Unchecked: the Check field is not set (absent counts as 0).
	Unchecked []string
	// CreatedAfter and CreatedBefore bound the creation time when not zero
	// (both exclusive).
	CreatedAfter, CreatedBefore time.Time
	// Values are the fields whose text each Found answers ("" when absent).
	Values []string
	// Oldest orders by creation, oldest first, instead of by organization
	// and name.
	Oldest bool
	// Limit, when positive, answers at most that many documents.
	Limit int
}

// Found is a document a Filter selected: its organization, its name, and
// the text of the filter's Values, in their order.
type Found struct {
	OrganizationID uuid.UUID
	Name           string
	Values         []string
}

// Find answers the documents f selects, read through db (the framework's
// pool when nil, or a transaction the caller holds).
func (s *Service) Find(ctx context.Context, db *gorm.DB, f Filter) ([]Found, error) {
	if db == nil {
		db = s.db
	}
	equal := make([]string, 0, len(f.Equal))
	for field := range f.Equal {
		equal = append(equal, field)
	}
	slices.Sort(equal) // one statement text for one filter
	for _, field := range slices.Concat(equal, f.Blank, f.Unchecked, f.Values) {
		if !fieldnameRE.MatchString(field) {
			return nil, fmt.Errorf("docframe: %q is no field name", field)
		}
	}
	cols := []string{"organization_id", "name"}
	for _, field := range f.Values {
		cols = append(cols, fmt.Sprintf("COALESCE(data ->> '%s', '')", field))
	}
	var where []string
	var args []any
	if f.OrganizationID != uuid.Nil {
		where, args = append(where, "organization_id = ?"), append(args, f.OrganizationID)
	}
	where, args = append(where, "doctype = ?"), append(args, f.Doctype)
	for _, field := range equal {
		values := f.Equal[field]
		if len(values) == 0 {
			return nil, nil
		}
		if len(values) == 1 {
			where, args = append(where, fieldText(field)+" = ?"), append(args, values[0])
		} else {
			where, args = append(where, fieldText(field)+" IN ?"), append(args, values)
		}
	}
	for _, field := range f.Blank {
		where = append(where, fmt.Sprintf("COALESCE(data ->> '%s', '') = ''", field))
	}
	for _, field := range f.Unchecked {
		where = append(where, fmt.Sprintf("COALESCE(data ->> '%s', '0') <> '1'", field))
	}
	if !f.CreatedBefore.IsZero() {
		where, args = append(where, "creation < ?"), append(args, f.CreatedBefore)
	}
	if !f.CreatedAfter.IsZero() {
		where, args = append(where, "creation > ?"), append(args, f.CreatedAfter)
	}
	q := "SELECT " + strings.Join(cols, ", ") + " FROM docframe_documents WHERE " + strings.Join(where, " AND ")
	if f.Oldest {
		q += " ORDER BY creation"
	} else {
		q += " ORDER BY organization_id, name"
	}
	if f.Limit > 0 {
		q, args = q+" LIMIT ?", append(args, f.Limit)
	}
	rows, err := db.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Found
	for rows.Next() {
		d := Found{Values: make([]string, len(f.Values))}
		dest := []any{&d.OrganizationID, &d.Name}
		for i := range d.Values {
			dest = append(dest, &d.Values[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
