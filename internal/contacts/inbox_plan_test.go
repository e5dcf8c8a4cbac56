package contacts

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/paging"
)

// planNode is the part of EXPLAIN (FORMAT JSON) the test reads.
type planNode struct {
	NodeType     string     `json:"Node Type"`
	RelationName string     `json:"Relation Name"`
	IndexName    string     `json:"Index Name"`
	Plans        []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// recordSelects records, values inlined, the SELECTs run on db.
func recordSelects(t *testing.T, db *gorm.DB) func() []string {
	var mu sync.Mutex
	var stmts []string
	record := func(tx *gorm.DB) {
		mu.Lock()
		defer mu.Unlock()
		stmts = append(stmts, tx.Dialector.Explain(tx.Statement.SQL.String(), tx.Statement.Vars...))
	}
	if err := db.Callback().Query().After("gorm:query").Register("test:record", record); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := stmts
		stmts = nil
		return out
	}
}

// The inbox's filters at scale: on an organization of 60,000 contacts, each
// filter's statements (the page and its count), captured as List runs them,
// have a plan that reads contacts through an index, never a sequential
// scan, and the page of unread, assigned and transferred conversations
// starts from the index made for it. The plans are taken with sequential
// scans disabled, as TestSweepsUseTheirIndexes does: at this size the
// planner may rightly prefer a scan, which at a million contacts it would
// not; a statement without a usable index still shows one. The real
// durations are logged.
func TestInboxFiltersUseTheirIndexes(t *testing.T) {
	t.Parallel()
	s, b := setupList(t)
	ctx := context.Background()
	const n = 60_000
	users := make([]uuid.UUID, 10)
	for i := range users {
		users[i] = uuid.New()
		exec(t, b.db, `INSERT INTO users (id, organization_id, email, password_hash) VALUES (?, ?, ?, 'x')`,
			users[i], b.org, users[i].String()+"@x.com")
	}
	// 1 in 100 unread; 1 in 4 assigned, spread over the 10 users; 20
	// active transfers, 3 of them held by users[0].
	exec(t, b.db, `INSERT INTO contacts (organization_id, account_id, phone_number, name, last_message_at, unread_count, assigned_to)
		SELECT ?, ?, '+1558' || lpad(i::text, 7, '0'), 'C ' || i, now() - i * interval '1 second',
		       CASE WHEN i % 100 = 0 THEN 1 + i % 3 ELSE 0 END,
		       CASE WHEN i % 4 = 0 THEN (CAST(? AS uuid[]))[1 + (i / 4) % 10] END
		FROM generate_series(0, ? - 1) AS i`, b.org, b.acc, usersArray(users), n)
	exec(t, b.db, `INSERT INTO agent_transfers (organization_id, contact_id, status, agent_id)
		SELECT ?, id, 'active', CASE WHEN rn <= 3 THEN CAST(? AS uuid) END
		FROM (SELECT id, row_number() OVER (ORDER BY phone_number) AS rn FROM contacts
		      WHERE organization_id = ? AND phone_number LIKE '%7' ORDER BY phone_number LIMIT 20) t`, b.org, users[0], b.org)
	exec(t, b.db, "ANALYZE contacts")
	exec(t, b.db, "ANALYZE agent_transfers")

	rec := recordSelects(t, b.db)
	me := users[0]
	agent := Viewer{UserID: me}
	for _, c := range []struct {
		name  string
		f     Filter
		rows  int
		index string // the index the page must be read through
	}{
		{"unread", Filter{Viewer: EveryContact, Unread: true}, 20, "contacts_org_unread"},
		{"assigned to one", Filter{Viewer: EveryContact, AssignedTo: &me}, 20, "contacts_org_assigned"},
		{"unassigned", Filter{Viewer: EveryContact, Unassigned: true}, 20, ""},
		{"has transfer", Filter{Viewer: EveryContact, HasTransfer: true}, 20, "agent_transfers_one_active"},
		{"an agent's own", Filter{Viewer: agent}, 20, "contacts_org_assigned"},
		{"an agent's own unread", Filter{Viewer: agent, Unread: true}, 20, ""},
	} {
		start := time.Now()
		rows, total, err := s.List(ctx, b.org, c.f, paging.Params{Page: 1, Limit: 20})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.rows > 0 && len(rows) != c.rows {
			t.Fatalf("%s: %d rows (total %+v)", c.name, len(rows), total)
		}
		t.Logf("%s: %d rows of %d in %s", c.name, len(rows), total.N, took)
		for _, q := range rec() {
			if !strings.Contains(q, "FROM \"contacts\"") || strings.Contains(q, "contact_tags") {
				continue
			}
			var plan []struct{ Plan planNode }
			var raw string
			err := b.db.Transaction(func(tx *gorm.DB) error {
				if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
					return err
				}
				return tx.Raw("EXPLAIN (FORMAT JSON) " + q).Row().Scan(&raw)
			})
			if err != nil {
				t.Fatalf("%s: explain %s: %v", c.name, q, err)
			}
			if err := json.Unmarshal([]byte(raw), &plan); err != nil {
				t.Fatal(err)
			}
			used := false
			plan[0].Plan.walk(func(p planNode) {
				if p.NodeType == "Seq Scan" && p.RelationName == "contacts" {
					t.Errorf("%s: a sequential scan of contacts:\n%s\n%s", c.name, q, raw)
				}
				if p.IndexName == c.index {
					used = true
				}
			})
			if c.index != "" && !used && strings.Contains(q, "LIMIT 20") {
				t.Errorf("%s: the page is not read through %s:\n%s\n%s", c.name, c.index, q, raw)
			}
		}
	}
}

func usersArray(ids []uuid.UUID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return "{" + strings.Join(s, ",") + "}"
}
