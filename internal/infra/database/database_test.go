package database_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"wharf/internal/infra/database"
	"wharf/internal/testenv"
)

// Two replicas starting together against a database that does not exist
// yet: both succeed, and each migration is applied exactly once.
func TestConcurrentStartCreatesAndMigratesOnce(t *testing.T) {
	dsn := testenv.EmptyDatabaseURL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := database.EnsureDatabase(ctx, dsn); err != nil {
				errs[i] = err
				return
			}
			errs[i] = database.Migrate(ctx, dsn, testenv.Quiet())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	db, err := database.Open(ctx, dsn, testenv.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	var dupes int64
	if err := db.Raw(`SELECT count(*) FROM (SELECT version_id FROM goose_db_version WHERE version_id > 0 GROUP BY version_id HAVING count(*) > 1) d`).Scan(&dupes).Error; err != nil {
		t.Fatal(err)
	}
	if dupes != 0 {
		t.Fatalf("%d migrations applied more than once", dupes)
	}
	var perms int64
	db.Raw("SELECT count(*) FROM permissions").Scan(&perms)
	if perms == 0 {
		t.Fatal("permissions not seeded")
	}
	// Running again changes nothing.
	if err := database.Migrate(ctx, dsn, testenv.Quiet()); err != nil {
		t.Fatal(err)
	}
}

// Sessions run in UTC and without JIT compilation, unless the DSN says
// otherwise.
func TestSessionDefaults(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.EmptyDatabaseURL(t)
	if err := database.EnsureDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	show := func(dsn string) (tz, jit string) {
		t.Helper()
		db, err := database.Open(ctx, dsn, testenv.Quiet())
		if err != nil {
			t.Fatal(err)
		}
		defer database.Close(db)
		if err := db.Raw(`SELECT current_setting('TimeZone'), current_setting('jit')`).Row().Scan(&tz, &jit); err != nil {
			t.Fatal(err)
		}
		return tz, jit
	}
	if tz, jit := show(dsn); tz != "UTC" || jit != "off" {
		t.Fatalf("timezone %q, jit %q: want UTC and off", tz, jit)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	if _, jit := show(dsn + sep + "jit=on"); jit != "on" {
		t.Fatalf("jit %q with jit=on in the DSN", jit)
	}
}
