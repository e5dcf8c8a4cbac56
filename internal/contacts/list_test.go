package contacts

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/paging"
	"wharf/internal/testenv"
	"wharf/models"
)

type listBundle struct {
	db  *gorm.DB
	org uuid.UUID
	acc uuid.UUID
}

func setupList(t *testing.T) (*Service, *listBundle) {
	t.Helper()
	db := testenv.DB(t)
	b := &listBundle{db: db, org: uuid.New(), acc: uuid.New()}
	exec(t, db, `INSERT INTO organizations (id, name, slug) VALUES (?, 'Org', ?)`, b.org, "org-"+b.org.String()[:8])
	exec(t, db, `INSERT INTO platform_accounts (id, organization_id, name, phone_number_id, business_account_id, access_token_enc,
		webhook_verify_token, status) VALUES (?, ?, 'Main', '1', '2', '\x00', 'v', 'active')`, b.acc, b.org)
	return NewService(db, nil, nil, nil), b
}

func exec(t *testing.T, db *gorm.DB, sql string, args ...any) {
	t.Helper()
	if err := db.Exec(sql, args...).Error; err != nil {
		t.Fatal(err)
	}
}

// seed inserts n contacts: every third without messages, the others with
// last activity spread (and repeated, so ties are broken by created_at and
// id), every other one on the account.
func (b *listBundle) seed(t *testing.T, n int, name string) {
	exec(t, b.db, `INSERT INTO contacts (organization_id, account_id, phone_number, name, last_message_at, created_at)
		SELECT ?, CASE WHEN i % 2 = 0 THEN CAST(? AS uuid) END, '+1559' || lpad(i::text, 7, '0'), ? || ' ' || i,
		       CASE WHEN i % 3 = 0 THEN NULL ELSE now() - (i % 97) * interval '1 minute' END,
		       now() - (i % 13) * interval '1 second'
		FROM generate_series(0, ? - 1) AS i`, b.org, b.acc, name, n)
	exec(t, b.db, "ANALYZE contacts")
}

func ids(vs []View) []uuid.UUID {
	out := make([]uuid.UUID, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

// Deep pages start from remembered positions; they must be exactly the
// pages OFFSET gives, for the whole list and for one account's.
func TestDeepPagesMatchOffsetPages(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	b.seed(t, 6000, "Ann")
	ctx := context.Background()
	for _, f := range []Filter{{Viewer: EveryContact}, {Viewer: EveryContact, AccountID: &b.acc}} {
		for _, pg := range []paging.Params{{Page: 41, Limit: 50}, {Page: 57, Limit: 50}, {Page: 101, Limit: 20}, {Page: 34, Limit: 87},
			{Page: 60, Limit: 100}, {Page: 61, Limit: 100}} {
			got, total, err := s.List(ctx, b.org, f, pg)
			if err != nil {
				t.Fatal(err)
			}
			q := b.db.Model(&models.Contact{}).Where("organization_id = ?", b.org)
			if f.AccountID != nil {
				q = q.Where("account_id = ?", *f.AccountID)
			}
			var want []models.Contact
			if err := q.Order("last_message_at DESC NULLS LAST, created_at DESC, id DESC").Limit(pg.Limit).Offset(pg.Offset()).
				Find(&want).Error; err != nil {
				t.Fatal(err)
			}
			if pg.Offset() < shallowRows {
				t.Fatalf("page %+v is not deep: the test proves nothing", pg)
			}
			if len(got) != len(want) {
				t.Fatalf("account %v page %+v: %d rows, want %d", f.AccountID != nil, pg, len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID {
					t.Fatalf("account %v page %+v row %d: %s, want %s", f.AccountID != nil, pg, i, got[i].ID, want[i].ID)
				}
			}
			wantTotal := int64(6000)
			if f.AccountID != nil {
				wantTotal = 3000
			}
			if total.N != wantTotal || total.Estimate {
				t.Fatalf("total %+v, want %d", total, wantTotal)
			}
		}
	}
}

// The maintained counts follow inserts, deletes, account changes and the
// organization's deletion.
func TestCountsFollowEveryChange(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	ctx := context.Background()
	b.seed(t, 100, "Ann")
	count := func(acc *uuid.UUID) int64 {
		n, err := s.count(ctx, b.org, acc)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count(nil) != 100 || count(&b.acc) != 50 {
		t.Fatalf("after seeding: %d, account %d", count(nil), count(&b.acc))
	}
	exec(t, b.db, `DELETE FROM contacts WHERE organization_id = ? AND phone_number LIKE '+1559000000%'`, b.org) // 10 rows
	exec(t, b.db, `UPDATE contacts SET account_id = NULL WHERE organization_id = ? AND phone_number = '+15590000020'`, b.org)
	exec(t, b.db, `UPDATE contacts SET name = 'renamed' WHERE organization_id = ?`, b.org) // no account change: no count change
	var exact, exactAcc int64
	b.db.Raw(`SELECT count(*) FROM contacts WHERE organization_id = ?`, b.org).Scan(&exact)
	b.db.Raw(`SELECT count(*) FROM contacts WHERE organization_id = ? AND account_id = ?`, b.org, b.acc).Scan(&exactAcc)
	if count(nil) != exact || count(&b.acc) != exactAcc || exact != 90 {
		t.Fatalf("counts %d/%d, exact %d/%d", count(nil), count(&b.acc), exact, exactAcc)
	}
	exec(t, b.db, `DELETE FROM organizations WHERE id = ?`, b.org)
	var left int64
	b.db.Raw(`SELECT count(*) FROM contact_counts WHERE organization_id = ?`, b.org).Scan(&left)
	if left != 0 {
		t.Fatalf("%d count rows left after the organization was deleted", left)
	}
}

// A search counts its matches exactly up to the cap and answers an
// estimate beyond it. (That it uses the trigram index at a million contacts
// is in docs/BENCHMARKS.md, with the plan.)
func TestSearchCountsUpToTheCap(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	ctx := context.Background()
	b.seed(t, countCap+500, "Ada Lovelace")
	rows, total, err := s.List(ctx, b.org, Filter{Viewer: EveryContact, Search: "1234"}, paging.Params{Page: 1, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if total.Estimate || total.N != int64(len(rows)) || len(rows) == 0 {
		t.Fatalf("search 1234: %d rows, total %+v", len(rows), total)
	}
	for _, r := range rows {
		if !strings.Contains(r.Name, "1234") && !strings.Contains(r.PhoneNumber, "1234") {
			t.Fatalf("%+v does not match", r.Contact)
		}
	}
	_, total, err = s.List(ctx, b.org, Filter{Viewer: EveryContact, Search: "lovelace"}, paging.Params{Page: 1, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !total.Estimate || total.N <= countCap {
		t.Fatalf("search matching everyone: total %+v, want an estimate above %d", total, countCap)
	}
}

// Another organization's contacts never show, in any kind of page.
func TestListIsScopedToTheOrganization(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	other := &listBundle{db: b.db, org: uuid.New(), acc: b.acc}
	exec(t, b.db, `INSERT INTO organizations (id, name, slug) VALUES (?, 'Other', ?)`, other.org, "org-"+other.org.String()[:8])
	other.seed(t, 3000, "Other")
	rows, total, err := s.List(context.Background(), b.org, Filter{Viewer: EveryContact}, paging.Params{Page: 45, Limit: 50})
	if err != nil || len(rows) != 0 || total.N != 0 {
		t.Fatalf("an empty organization sees %d rows, total %+v, %v", len(rows), total, err)
	}
	rows, _, err = s.List(context.Background(), b.org, Filter{Viewer: EveryContact, Search: "Other"}, paging.Params{Page: 1, Limit: 20})
	if err != nil || len(rows) != 0 {
		t.Fatalf("search finds %d rows of another organization (%v)", len(rows), err)
	}
}

// With masked numbers a search matches a number only whole, and names by
// text; a fragment of a number, or of a name that looks like one, finds
// nothing. Unmasked, fragments find.
func TestMaskedSearchMatchesOnlyWholeNumbers(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	exec(t, b.db, `INSERT INTO contacts (organization_id, phone_number, name) VALUES (?, '+15550190001', 'Ann'),
		(?, '+15550190002', '+1 555 077 1234'), (?, '+15550190003', 'Bob 555')`, b.org, b.org, b.org)
	names := func(search string, masked bool) string {
		t.Helper()
		rows, _, err := s.List(context.Background(), b.org, Filter{Viewer: EveryContact, Search: search, MaskedNumbers: masked}, paging.Params{Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, v := range rows {
			out = append(out, v.Name)
		}
		return strings.Join(out, "|")
	}
	for search, want := range map[string]string{"0190001": "Ann", "077 12": "+1 555 077 1234", "Bob": "Bob 555"} {
		if got := names(search, false); got != want {
			t.Errorf("unmasked %q: %q, want %q", search, got, want)
		}
	}
	for search, want := range map[string]string{
		"0190001": "", "555": "", "077 12": "", "+1555": "", // fragments: nothing
		"+1 (555) 019-0001": "Ann", "15550190001": "Ann", // whole numbers
		"Bob": "Bob 555", "ann": "Ann", "Bob 5": "Bob 555", // names, which no masked value matches
	} {
		if got := names(search, true); got != want {
			t.Errorf("masked %q: %q, want %q", search, got, want)
		}
	}
}

// A tag filter lists the contacts that have the tag (any case), counts them,
// combines with a search, and never reaches another organization's tag of
// the same name.
func TestListFiltersByTag(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	ctx := context.Background()
	b.seed(t, 30, "Zed")
	other := &listBundle{db: b.db, org: uuid.New(), acc: b.acc}
	exec(t, b.db, `INSERT INTO organizations (id, name, slug) VALUES (?, 'Other', ?)`, other.org, "org-"+other.org.String()[:8])
	other.seed(t, 5, "Zed")
	tag := func(orgID uuid.UUID, name string, limit int) {
		t.Helper()
		exec(t, b.db, `INSERT INTO tags (id, organization_id, name) VALUES (gen_random_uuid(), ?, ?)`, orgID, name)
		exec(t, b.db, `INSERT INTO contact_tags (contact_id, tag_id)
			SELECT c.id, g.id FROM (SELECT id FROM contacts WHERE organization_id = ? ORDER BY phone_number LIMIT ?) c,
			tags g WHERE g.organization_id = ? AND g.name = ?`, orgID, limit, orgID, name)
	}
	tag(b.org, "vip", 7)
	tag(other.org, "vip", 5)
	rows, total, err := s.List(ctx, b.org, Filter{Viewer: EveryContact, Tag: "VIP"}, paging.Params{Page: 1, Limit: 5})
	if err != nil || len(rows) != 5 || total.N != 7 {
		t.Fatalf("tag vip: %d rows, total %+v, %v", len(rows), total, err)
	}
	rows, total, err = s.List(ctx, b.org, Filter{Viewer: EveryContact, Tag: "vip"}, paging.Params{Page: 2, Limit: 5})
	if err != nil || len(rows) != 2 || total.N != 7 {
		t.Fatalf("tag vip, page 2: %d rows, total %+v, %v", len(rows), total, err)
	}
	for _, r := range rows {
		if r.OrganizationID != b.org || !slices.Contains(r.Tags, "vip") {
			t.Fatalf("row %+v", r)
		}
	}
	rows, _, err = s.List(ctx, b.org, Filter{Viewer: EveryContact, Tag: "vip", Search: "Zed 1"}, paging.Params{Page: 1, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !strings.HasPrefix(r.Name, "Zed 1") || !slices.Contains(r.Tags, "vip") {
			t.Fatalf("tag and search: %+v", r.Contact)
		}
	}
	if rows, total, err := s.List(ctx, b.org, Filter{Viewer: EveryContact, Tag: "nobody"}, paging.Params{Page: 1, Limit: 20}); err != nil || len(rows) != 0 || total.N != 0 {
		t.Fatalf("an unknown tag: %d rows, total %+v, %v", len(rows), total, err)
	}
}

// A search through the trigram index (its matches first, then ordered)
// answers exactly the rows, order and total of the plain filtered query, in
// every page, for the whole list and one account's (issue 21).
func TestTrigramSearchKeepsTheListOrder(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	ctx := context.Background()
	b.seed(t, 3000, "Grace Hopper")
	for _, term := range []string{"123", "hopper 12", "+15590002", "HOPPER 29"} {
		for _, acc := range []*uuid.UUID{nil, &b.acc} {
			if !trigramSearchable(term, false) {
				t.Fatalf("%q should read through the trigram index", term)
			}
			want := b.db.Model(&models.Contact{}).Where("organization_id = ?", b.org)
			if acc != nil {
				want = want.Where("account_id = ?", *acc)
			}
			cond, args := SearchCondition(term, false)
			var all []models.Contact
			if err := want.Where(cond, args...).Order(listOrder).Find(&all).Error; err != nil {
				t.Fatal(err)
			}
			if len(all) == 0 {
				t.Fatalf("%q matches nothing: a poor test", term)
			}
			for _, page := range []int{1, 2, 3, 1 + len(all)/20} {
				rows, total, err := s.List(ctx, b.org, Filter{Viewer: EveryContact, Search: term, AccountID: acc},
					paging.Params{Page: page, Limit: 20})
				if err != nil {
					t.Fatal(err)
				}
				lo, hi := min((page-1)*20, len(all)), min(page*20, len(all))
				var wantIDs []uuid.UUID
				for _, c := range all[lo:hi] {
					wantIDs = append(wantIDs, c.ID)
				}
				if !slices.Equal(ids(rows), wantIDs) {
					t.Fatalf("search %q (account %v) page %d: %v, want %v", term, acc != nil, page, ids(rows), wantIDs)
				}
				if len(rows) > 0 && (total.Estimate || total.N != int64(len(all))) {
					t.Fatalf("search %q page %d: total %+v, want %d", term, page, total, len(all))
				}
			}
		}
	}
}

func TestTrigramSearchable(t *testing.T) {
	for term, want := range map[string]bool{"ab": false, "a b c": false, "12 34": false, "abc": true, "+1 555": true,
		"x12": true, "é1a": true} {
		if got := trigramSearchable(term, false); got != want {
			t.Errorf("trigramSearchable(%q) = %v, want %v", term, got, want)
		}
	}
	if trigramSearchable("+1 555 0100", true) {
		t.Error("a masked number is matched whole, not through the trigram index")
	}
	if !trigramSearchable("Grace", true) {
		t.Error("a masked organization's name search reads through the trigram index")
	}
}
