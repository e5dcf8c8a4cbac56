package contacts

import (
	"context"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/paging"
	"wharf/internal/infra/phone"
	"wharf/models"
)

// Filter narrows a contact list.
type Filter struct {
	Search    string     // matches the name, profile name or phone number anywhere
	AccountID *uuid.UUID // contacts of one account
	Tag       string     // contacts having this tag (its name, any case)
	// MaskedNumbers is set when the organization masks phone numbers: a
	// Search that is NumberLike then matches only a whole number, and no
	// other Search matches a number (see SearchCondition).
	MaskedNumbers bool

	// The inbox's filters (issue 22): contacts assigned to AssignedTo, or
	// to nobody (Unassigned); with unread messages; with an active
	// transfer.
	AssignedTo  *uuid.UUID
	Unassigned  bool
	Unread      bool
	HasTransfer bool
	// Viewer is who lists (visibility.go); the zero Viewer sees only
	// contacts assigned to uuid.Nil, that is none: callers set it.
	Viewer Viewer
}

// narrowed reports whether f filters beyond the organization or account,
// so that the list is served like a search (its page first, a capped count).
func (f Filter) narrowed() bool {
	return strings.TrimSpace(f.Search) != "" || strings.TrimSpace(f.Tag) != "" || f.AssignedTo != nil || f.Unassigned ||
		f.Unread || f.HasTransfer || !f.Viewer.All
}

// SearchCondition is the WHERE condition of a contact search for term (not
// empty) over columns name, profile_name and phone_number, with its
// arguments. Unmasked, the term matches any of them anywhere
// (case-insensitive). Masked, a term made only of digits and phone
// punctuation (phone.NumberLike) matches the contact whose number it is,
// normalised, and nothing else (no fragment, no name: the masked digits of
// a number or of a name that looks like one must not be found piecewise);
// any other term matches names only, where it cannot hit masked digits.
// The export's contact search applies the same rule (internal/dataops).
func SearchCondition(term string, masked bool) (string, []any) {
	switch {
	case !masked:
		p := paging.Contains(term)
		return "(name ILIKE ? OR profile_name ILIKE ? OR phone_number ILIKE ?)", []any{p, p, p}
	case phone.NumberLike(term):
		n, err := phone.Normalize(term)
		if err != nil {
			return "false", nil
		}
		return "phone_number = ?", []any{n}
	default:
		p := paging.Contains(term)
		return "(name ILIKE ? OR profile_name ILIKE ?)", []any{p, p}
	}
}

// Total is a list's number of rows. Estimate is set when counting exactly
// would cost more than the page (a search matching more than countCap
// contacts): N is then the planner's estimate.
type Total struct {
	N        int64
	Estimate bool
}

// Sizes that decide how a list is served.
const (
	// countCap bounds the rows a search's total counts exactly.
	countCap = 10_000
	// shallowRows: pages that start within the first shallowRows rows are
	// read with OFFSET (the index walk is short); deeper ones start from a
	// remembered position (positions.go).
	shallowRows = 2_000
)

// listOrder is the list's order, most recently active first; list_at is
// last_message_at, or -infinity for contacts without messages (last).
const listOrder = "list_at DESC, created_at DESC, id DESC"

// List returns a page of contacts, most recently active first.
//
// At a million contacts an organization's list must stay fast: the total of
// an unfiltered list (or one account's) is read from maintained counts
// (contact_counts, kept by a trigger), a search uses the trigram index and
// counts its matches up to countCap, and a page deep in the list starts from
// a remembered position instead of walking past every row before it.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, f Filter, pg paging.Params) ([]View, Total, error) {
	db := s.db.WithContext(ctx)
	q := db.Model(&models.Contact{}).Where("organization_id = ?", orgID)
	if f.AccountID != nil {
		q = q.Where("account_id = ?", *f.AccountID)
	}
	search, tag := strings.TrimSpace(f.Search), strings.TrimSpace(f.Tag)
	offset := pg.Offset()
	var rows []models.Contact
	var total Total
	var err error
	overCap := false // the search is known to match more than countCap contacts
	if f.narrowed() {
		// A search reads its page first: most searches (a number, a name)
		// match fewer contacts than a page, and then the page is the count.
		// The inbox's filters read through their indexes (migration 00027)
		// in the list's order.
		switch {
		case f.AssignedTo != nil:
			q = q.Where("assigned_to = ?", *f.AssignedTo)
		case f.Unassigned:
			q = q.Where("assigned_to IS NULL")
		}
		if f.Unread {
			q = q.Where("unread_count > 0")
		}
		if f.HasTransfer {
			q = q.Where(`EXISTS (SELECT 1 FROM agent_transfers t WHERE t.organization_id = contacts.organization_id
				AND t.contact_id = contacts.id AND t.status = 'active')`)
		}
		q = scoped(q, orgID, f.Viewer)
		if search != "" {
			cond, args := SearchCondition(search, f.MaskedNumbers)
			if trigramSearchable(search, f.MaskedNumbers) {
				ids, dense, err := s.searchIDs(ctx, orgID, cond, args)
				if err != nil {
					return nil, Total{}, err
				}
				// More than countCap matches and nothing else narrows:
				// the count would only find that again.
				overCap = dense && f.AccountID == nil && tag == "" && f.AssignedTo == nil && !f.Unassigned &&
					!f.Unread && !f.HasTransfer && f.Viewer.All
				if !dense {
					// The few matches are the only rows the page is read
					// from: the planner cannot walk the list order
					// instead, whatever its statistics say.
					q = q.Table("(SELECT * FROM contacts WHERE id IN ? OFFSET 0) AS contacts", nullIfEmpty(ids))
				}
			}
			q = q.Where(cond, args...)
		}
		if tag != "" {
			q = q.Where(`EXISTS (SELECT 1 FROM contact_tags ct JOIN tags g ON g.id = ct.tag_id
				WHERE ct.contact_id = contacts.id AND g.organization_id = contacts.organization_id AND lower(g.name) = lower(?))`, tag)
		}
		if err = q.Session(&gorm.Session{}).Order(listOrder).Limit(pg.Limit).Offset(offset).Find(&rows).Error; err != nil {
			return nil, Total{}, err
		}
		switch {
		case len(rows) > 0 && len(rows) < pg.Limit:
			total.N = int64(offset + len(rows))
		case overCap:
			total, err = estimateTotal(q)
		default:
			total, err = countCapped(q)
		}
	} else {
		total.N, err = s.count(ctx, orgID, f.AccountID)
		switch {
		case err != nil || int64(offset) >= total.N:
			// past the end: nothing to read
		case offset >= shallowRows:
			rows, err = s.deepPage(ctx, orgID, f.AccountID, pg)
		default:
			err = q.Order(listOrder).Limit(pg.Limit).Offset(offset).Find(&rows).Error
		}
	}
	if err != nil {
		return nil, Total{}, err
	}
	views, err := s.withTags(ctx, rows)
	return views, total, err
}

// count reads an organization's (or one account's) maintained count.
func (s *Service) count(ctx context.Context, orgID uuid.UUID, accountID *uuid.UUID) (int64, error) {
	q := s.db.WithContext(ctx).Table("contact_counts").Select("COALESCE(sum(n), 0)").Where("organization_id = ?", orgID)
	if accountID != nil {
		q = q.Where("account_id = ?", *accountID)
	}
	var n int64
	return n, q.Scan(&n).Error
}

// countCapped counts a filtered list exactly up to countCap rows; beyond, it
// answers the planner's estimate.
func countCapped(q *gorm.DB) (Total, error) {
	var n int64
	sub := q.Session(&gorm.Session{}).Select("1").Limit(countCap + 1)
	if err := q.Session(&gorm.Session{NewDB: true}).Table("(?) AS capped", sub).Count(&n).Error; err != nil {
		return Total{}, err
	}
	if n <= countCap {
		return Total{N: n}, nil
	}
	return estimateTotal(q)
}

// estimateTotal answers the planner's estimate of a filtered list's rows,
// at least countCap+1 (the list is known to hold more than countCap).
func estimateTotal(q *gorm.DB) (Total, error) {
	var plan []string
	stmt := q.Session(&gorm.Session{DryRun: true}).Select("1").Find(&[]models.Contact{}).Statement
	if err := q.Session(&gorm.Session{NewDB: true}).Raw("EXPLAIN "+stmt.SQL.String(), stmt.Vars...).Scan(&plan).Error; err != nil {
		return Total{}, err
	}
	return Total{N: max(estimateRows(plan), countCap+1), Estimate: true}, nil
}

// A search whose term the trigram index can serve takes its matches first
// (issue 21): their ids through the index, at most countCap+1 of them, and
// only then the page, ordered among those few rows. Left to itself the
// planner may instead walk the list order and filter every row until the
// page is full, which it does when its statistics are stale (right after a
// bulk import the organization looks empty to it): at a million contacts,
// seconds per search instead of milliseconds. In searchIDs the matching
// runs in a subquery fenced by OFFSET 0 that has no organization condition,
// so no btree index (all of them lead with organization_id) can serve it,
// and sequential scans are off: only the trigram index can. The
// organization is checked on the rows it answers. When more than countCap
// contacts match, the matches are dense and the list-order walk finds a
// page quickly: the search is served as before.

// trigramSearchable reports whether searching for term reads through the
// trigram index: the term must hold three letters or digits in a row
// (shorter words give pg_trgm no trigram, and the index would answer every
// row), and not be a masked number (matched whole, by the unique index).
func trigramSearchable(term string, masked bool) bool {
	if masked && phone.NumberLike(term) {
		return false
	}
	run := 0
	for _, r := range term {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if run++; run >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// searchIDs answers the ids of the organization's contacts matching cond
// (a SearchCondition), or dense when there are more than countCap of them.
func (s *Service) searchIDs(ctx context.Context, orgID uuid.UUID, cond string, args []any) ([]uuid.UUID, bool, error) {
	var ids []uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Without a sequential scan the matching can only read through the
		// trigram index: a planner that believes the term frequent (stale
		// statistics, or a large pending list after an import, which makes
		// the index look dear) would otherwise read the whole table.
		if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
			return err
		}
		return tx.Raw(`SELECT m.id FROM (SELECT id, organization_id FROM contacts WHERE `+cond+` OFFSET 0) m
			WHERE m.organization_id = ? LIMIT ?`, append(append([]any{}, args...), orgID, countCap+1)...).Scan(&ids).Error
	})
	if err != nil {
		return nil, false, err
	}
	return ids, len(ids) > countCap, nil
}

// nullIfEmpty makes an empty id list usable in IN (?): it matches nothing.
func nullIfEmpty(ids []uuid.UUID) any {
	if len(ids) == 0 {
		return []any{nil}
	}
	return ids
}
