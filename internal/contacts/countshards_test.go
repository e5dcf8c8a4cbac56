package contacts_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"testing"
	"time"

	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// Concurrent transactions that create contacts of one organization and
// account do not queue behind each other on the maintained counts: each
// connection adds to the count row of its own backend (pid modulo 64), so
// connections whose pids differ modulo 64 never share a row. With a shard
// drawn at random, 24 open transactions shared a row 99 times in 100.
func TestNewContactsOnDistinctConnectionsDoNotWaitOnTheCounts(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	acc := f.Account(org.ID)
	db, err := f.DB.DB()
	if err != nil {
		t.Fatal(err)
	}
	// 24 connections with distinct pids modulo 64 (a pool opened at once
	// has consecutive pids; here others may have been opened between). A
	// connection whose pid repeats one is closed for good, so that the pool
	// opens a new one: holding it instead would exhaust the pool (25) after
	// two repeats, and the next Conn would wait for ever.
	const want = 24
	var conns []*sql.Conn
	used := map[int]bool{}
	for tries := 0; len(conns) < want && tries < 200; tries++ {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if err := c.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		if used[pid%64] {
			_ = c.Raw(func(any) error { return driver.ErrBadConn }) // dropped from the pool
			c.Close()
			continue
		}
		used[pid%64] = true
		conns = append(conns, c)
	}
	if len(conns) < want {
		t.Skipf("found only %d connections with distinct pids modulo 64", len(conns))
	}
	var txs []*sql.Tx
	for i, c := range conns {
		defer c.Close()
		tx, err := c.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		// A wait on another transaction's count row fails at once.
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO contacts (organization_id, account_id, phone_number, profile_name, metadata)
			VALUES ($1, $2, $3, '', '{}')`, org.ID, acc.ID, fmt.Sprintf("+1555010800%02d", i)); err != nil {
			t.Fatalf("contact %d waited on another open transaction: %v", i, err)
		}
		txs = append(txs, tx)
	}
	for _, tx := range txs {
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	f.DB.Raw(`SELECT COALESCE(sum(n), 0) FROM contact_counts WHERE organization_id = ?`, org.ID).Scan(&n)
	if n != want {
		t.Errorf("counted %d contacts; want %d", n, want)
	}
}
