package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"wharf/internal/apptest"
)

// recordSQL records, with their values inlined, the statements run on db
// until the returned stop is called.
func recordSQL(t *testing.T, db *gorm.DB) (stop func() []string) {
	var mu sync.Mutex
	var stmts []string
	on := true
	record := func(tx *gorm.DB) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			stmts = append(stmts, tx.Dialector.Explain(tx.Statement.SQL.String(), tx.Statement.Vars...))
		}
	}
	cb := db.Callback()
	for name, err := range map[string]error{
		"query":  cb.Query().After("gorm:query").Register("test:record", record),
		"row":    cb.Row().After("gorm:row").Register("test:record", record),
		"raw":    cb.Raw().After("gorm:raw").Register("test:record", record),
		"update": cb.Update().After("gorm:update").Register("test:record", record),
		"delete": cb.Delete().After("gorm:delete").Register("test:record", record),
	} {
		if err != nil {
			t.Fatalf("register %s callback: %v", name, err)
		}
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		on = false
		return stmts
	}
}

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

// The sweeps run every 30 s or every minute over every tenant's rows: each
// of their statements, captured as the code runs them, reads through a
// partial index of the rows it is after instead of scanning its table. The
// plans are taken with sequential scans disabled, so that the planner's
// choice on a small test table does not matter: a statement with no usable
// index would still show a Seq Scan (or another index).
func TestSweepsUseTheirIndexes(t *testing.T) {
	t.Parallel()
	e := apptest.New(t, nil)
	ctx := context.Background()
	srv := e.API.Services
	stop := recordSQL(t, e.DB)
	if _, _, err := srv.Messaging.SweepUnconfirmed(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Messaging.SweepMedia(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Webhooks.SweepUndispatched(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Inbound.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	stmts := stop()

	want := []struct{ table, index string }{
		{"messages", "messages_queued"},                // queued sends whose task was lost
		{"messages", "messages_unconfirmed"},           // started sends without an outcome
		{"messages", "messages_media_pending"},         // received media whose fetch was lost
		{"events", "events_undispatched"},              // events whose dispatch was lost
		{"events", "events_dispatched"},                // dispatched events older than a week
		{"inbound_events", "inbound_events_pending"},   // unprocessed events
		{"inbound_events", "inbound_events_processed"}, // processed events older than three days
	}
	if len(stmts) != len(want) {
		t.Fatalf("the sweeps ran %d statements, the test knows %d:\n%s", len(stmts), len(want), strings.Join(stmts, "\n"))
	}
	for i, stmt := range stmts {
		var out []struct {
			Plan planNode `json:"Plan"`
		}
		err := e.DB.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL enable_seqscan = off").Error; err != nil {
				return err
			}
			var raw string
			if err := tx.Raw("EXPLAIN (FORMAT JSON) " + stmt).Row().Scan(&raw); err != nil {
				return err
			}
			return json.Unmarshal([]byte(raw), &out)
		})
		if err != nil || len(out) != 1 {
			t.Fatalf("explain %s: %v", stmt, err)
		}
		var indexes, seqScans []string
		out[0].Plan.walk(func(n planNode) {
			if n.IndexName != "" {
				indexes = append(indexes, n.IndexName)
			}
			if n.NodeType == "Seq Scan" {
				seqScans = append(seqScans, n.RelationName)
			}
		})
		w := want[i]
		if !strings.Contains(stmt, w.table) || len(seqScans) > 0 || len(indexes) != 1 || indexes[0] != w.index {
			t.Errorf("%s\nuses indexes %v and scans %v, want only %s", stmt, indexes, seqScans, w.index)
		}
	}
}
