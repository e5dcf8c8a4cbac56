package campaigns

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/jobs"
)

// Only a database that is away is waited for; an error in the statement
// would fail again and is returned at once.
func TestDBUnavailableTellsAnOutageFromABadStatement(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.ErrUnexpectedEOF, true},
		{errors.New("failed to connect: dial tcp 127.0.0.1:5432: connect: connection refused"), true},
		{&pgconn.PgError{Code: "57P01"}, true},  // admin shutdown
		{&pgconn.PgError{Code: "57P03"}, true},  // the database system is starting up
		{&pgconn.PgError{Code: "08006"}, true},  // connection failure
		{&pgconn.PgError{Code: "40P01"}, true},  // deadlock: run it again
		{&pgconn.PgError{Code: "42601"}, false}, // syntax error
		{&pgconn.PgError{Code: "23505"}, false}, // unique violation
		{gorm.ErrRecordNotFound, false},
		{apperr.NotFoundf("campaign not found"), false},
		{context.Canceled, false},
	} {
		if got := dbUnavailable(tc.err); got != tc.want {
			t.Errorf("dbUnavailable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if _, ok := jobs.IsRateLimited(dbWait(io.ErrUnexpectedEOF)); !ok {
		t.Error("a run that cannot load while the database is away must wait without using a retry")
	}
	if _, ok := jobs.IsRateLimited(dbWait(apperr.Invalidf("x"))); ok {
		t.Error("a real error must not turn into a wait")
	}
}

// RateWindow reports sends per second over the last ten seconds.
func TestRateWindow(t *testing.T) {
	var w RateWindow
	at := time.Unix(1000, 0)
	p := &Progress{Total: 100, Pending: 100}
	w.Observe(p, at)
	if p.RecentPerSecond != 0 {
		t.Fatalf("first sample %v", p.RecentPerSecond)
	}
	for i := 1; i <= 20; i++ {
		p = &Progress{Total: 100, Pending: int64(100 - 3*i)}
		w.Observe(p, at.Add(time.Duration(i)*time.Second))
	}
	if p.RecentPerSecond != 3 {
		t.Fatalf("rate %v, want 3", p.RecentPerSecond)
	}
}
