// Package testenv gives tests real, isolated PostgreSQL databases and Redis
// databases.
//
// PostgreSQL: the migrations are applied once to a template database named
// after a hash of the migration files; each test gets a fresh copy (CREATE
// DATABASE ... TEMPLATE), dropped when the test ends; DB opens one. Redis:
// each test that asks leases one of the numbered Redis databases 1-15 for
// itself, flushed, until it ends (test binaries of several packages share
// the pool; a test waits while all are taken). Every test thus owns its
// databases and may call t.Parallel.
//
// TEST_DATABASE_URL and TEST_REDIS_URL point at the servers (defaults: the
// local ones with trust authentication).
package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"wharf/internal/infra/database"
	"wharf/migrations"
)

// DatabaseServerURL is the URL of the test PostgreSQL server's maintenance
// database.
func DatabaseServerURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

func redisServerURL() string {
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

func withDB(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	u.Path = "/" + name
	return u.String()
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// Quiet is a logger for tests that only shows warnings and errors.
func Quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func migrationsHash() string {
	h := sha256.New()
	_ = fs.WalkDir(migrations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(migrations.FS, p)
		h.Write([]byte(p))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// ensureTemplate creates the migrated template once per migration set. An
// advisory lock on the server serialises test binaries that race to create it.
func ensureTemplate(ctx context.Context) (string, error) {
	templateOnce.Do(func() {
		name := "wharf_tmpl_" + migrationsHash()
		admin, err := pgconn.Connect(ctx, DatabaseServerURL())
		if err != nil {
			templateErr = fmt.Errorf("test database server (TEST_DATABASE_URL): %w", err)
			return
		}
		defer admin.Close(ctx)
		if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock(827364)").ReadAll(); err != nil {
			templateErr = err
			return
		}
		defer func() { _, _ = admin.Exec(context.Background(), "SELECT pg_advisory_unlock(827364)").ReadAll() }()
		res, err := admin.Exec(ctx, fmt.Sprintf("SELECT 1 FROM pg_database WHERE datname = '%s' AND datistemplate", name)).ReadAll()
		if err != nil {
			templateErr = err
			return
		}
		if len(res) > 0 && len(res[0].Rows) > 0 {
			templateName = name
			return
		}
		_, _ = admin.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %q WITH (FORCE)`, name)).ReadAll()
		if _, err := admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %q`, name)).ReadAll(); err != nil {
			templateErr = err
			return
		}
		if err := database.Migrate(ctx, withDB(DatabaseServerURL(), name), Quiet()); err != nil {
			templateErr = err
			return
		}
		if _, err := admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %q WITH is_template true`, name)).ReadAll(); err != nil {
			templateErr = err
			return
		}
		templateName = name
		dropStaleTemplates(ctx, admin, name)
	})
	return templateName, templateErr
}

// dropStaleTemplates removes templates of older migration sets, so they do
// not pile up on a developer's server. The four newest (by OID, which grows
// with creation) are kept besides the current one: test runs of other
// checkouts or branches may be copying them at this very moment.
func dropStaleTemplates(ctx context.Context, admin *pgconn.PgConn, keep string) {
	res, err := admin.Exec(ctx, fmt.Sprintf(
		"SELECT datname FROM pg_database WHERE datname LIKE 'wharf_tmpl_%%' AND datname <> '%s' ORDER BY oid DESC OFFSET 4", keep)).ReadAll()
	if err != nil || len(res) == 0 {
		return
	}
	for _, row := range res[0].Rows {
		name := string(row[0])
		_, _ = admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %q WITH is_template false`, name)).ReadAll()
		_, _ = admin.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %q WITH (FORCE)`, name)).ReadAll()
	}
}

// DatabaseURL returns the URL of a fresh, migrated database for this test.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	tmpl, err := ensureTemplate(ctx)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	name := "wharf_t_" + randHex(6)
	admin, err := pgconn.Connect(ctx, DatabaseServerURL())
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer admin.Close(ctx)
	// CREATE DATABASE fails while another session is connected to the
	// template, which happens for an instant while a parallel package copies
	// it; retry briefly.
	for attempt := 0; ; attempt++ {
		_, err = admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %q TEMPLATE %q`, name, tmpl)).ReadAll()
		if err == nil || attempt == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	t.Cleanup(func() { DropDatabase(t, name) })
	return withDB(DatabaseServerURL(), name)
}

// DB opens a fresh, migrated database of this test's own (see DatabaseURL),
// closed and dropped when the test ends.
func DB(t testing.TB) *gorm.DB {
	t.Helper()
	db, err := database.Open(context.Background(), DatabaseURL(t), Quiet())
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { database.Close(db) })
	return db
}

// OnlyConnectionTx shrinks db's pool to one connection and begins a
// transaction on it (with a 10 s deadline, rolled back when the test ends):
// the state of a caller whose transaction holds the last connection of a
// spent pool. Work that asks the pool for another connection there waits
// until the deadline; work that goes through the transaction answers.
func OnlyConnectionTx(t testing.TB, db *gorm.DB) (context.Context, *gorm.DB) {
	t.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	tx := db.WithContext(ctx).Begin()
	if tx.Error != nil {
		t.Fatal(tx.Error)
	}
	t.Cleanup(func() { tx.Rollback() })
	return ctx, tx
}

// EmptyDatabaseURL returns the URL of a database that does not exist yet (for
// tests of creation and migration); it is dropped after the test.
func EmptyDatabaseURL(t testing.TB) string {
	name := "wharf_t_" + randHex(6)
	t.Cleanup(func() { DropDatabase(t, name) })
	return withDB(DatabaseServerURL(), name)
}

// DropDatabase drops a test database, disconnecting its sessions.
func DropDatabase(t testing.TB, name string) {
	ctx := context.Background()
	admin, err := pgconn.Connect(ctx, DatabaseServerURL())
	if err != nil {
		t.Logf("testenv: drop %s: %v", name, err)
		return
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %q WITH (FORCE)`, name)).ReadAll(); err != nil {
		t.Logf("testenv: drop %s: %v", name, err)
	}
}

// leasePrefix names the lease keys in Redis database 0: one key per
// numbered database, holding the pid of the test binary that uses it. Test
// binaries of other checkouts share the pool, so the format stays a bare pid.
const leasePrefix = "wharf:testlease:"

// leaseWait is how long a test waits for a free Redis database before it
// fails: every database is held by a running test, and each is released when
// its test ends.
const leaseWait = 10 * time.Minute

// leases are the Redis databases this process holds, by test. A database
// leased under this process's pid but not in held belongs to an earlier
// process that had the same pid, and is taken over.
var leases = struct {
	sync.Mutex
	held   map[int]bool
	byTest map[testing.TB]int
}{held: map[int]bool{}, byTest: map[testing.TB]int{}}

// takeOverLease replaces a stale lease, only if it is still the one seen.
var takeOverLease = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then redis.call("SET", KEYS[1], ARGV[2], "EX", 3600) return 1 end return 0`)

// releaseLease deletes a lease only while it still holds our pid.
var releaseLease = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// leaseRedisDB claims one of databases 1-15 for test t until it ends,
// waiting while all are taken. A lease whose holder process is gone (a
// test binary that crashed or was killed) is taken over.
func leaseRedisDB(t testing.TB) (int, error) {
	opts, err := redis.ParseURL(redisServerURL())
	if err != nil {
		return 0, err
	}
	opts.DB = 0
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	pid := strconv.Itoa(os.Getpid())
	for deadline := time.Now().Add(leaseWait); ; time.Sleep(50 * time.Millisecond) {
		leases.Lock()
		db, err := tryLease(ctx, rdb, pid)
		if db > 0 {
			leases.byTest[t] = db
		}
		leases.Unlock()
		if err != nil {
			return 0, fmt.Errorf("test redis (TEST_REDIS_URL): %w", err)
		}
		if db > 0 {
			t.Cleanup(func() { releaseRedisDB(t, db, opts, pid) })
			return db, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no free redis database for tests after %s: databases 1-15 are all leased", leaseWait)
		}
	}
}

func releaseRedisDB(t testing.TB, db int, opts *redis.Options, pid string) {
	leases.Lock()
	defer leases.Unlock()
	delete(leases.byTest, t)
	delete(leases.held, db)
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := releaseLease.Run(context.Background(), rdb, []string{leasePrefix + strconv.Itoa(db)}, pid).Err(); err != nil {
		t.Logf("testenv: release redis database %d: %v", db, err)
	}
}

// tryLease takes the first free database and returns it (0: none free). It
// runs with leases locked.
func tryLease(ctx context.Context, rdb *redis.Client, pid string) (int, error) {
	for db := 1; db <= 15; db++ {
		if leases.held[db] {
			continue
		}
		key := leasePrefix + strconv.Itoa(db)
		ok, err := rdb.SetNX(ctx, key, pid, time.Hour).Result()
		if err != nil {
			return 0, err
		}
		if !ok {
			stale := rdb.Get(ctx, key).Val()
			holder, _ := strconv.Atoi(stale)
			if holder > 0 && holder != os.Getpid() && syscall.Kill(holder, 0) == nil {
				continue // a live test binary holds it
			}
			// The holder is gone, or was an earlier process with our pid:
			// take the lease over, unless another process just did.
			took, err := takeOverLease.Run(ctx, rdb, []string{key}, stale, pid).Int()
			if err != nil {
				return 0, err
			}
			if took == 0 {
				continue
			}
		}
		leases.held[db] = true
		return db, nil
	}
	return 0, nil
}

// RedisURL returns the URL of a Redis database of this test's own, flushed
// when the test first asks for it and released when the test ends. Tests
// may therefore run in parallel (t.Parallel) with Redis; asking again in the
// same test returns the same database, as it is.
func RedisURL(t testing.TB) string {
	t.Helper()
	leases.Lock()
	db, ok := leases.byTest[t]
	leases.Unlock()
	if !ok {
		var err error
		if db, err = leaseRedisDB(t); err != nil {
			t.Fatalf("testenv: %v", err)
		}
	}
	u, err := url.Parse(redisServerURL())
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	u.Path = "/" + strconv.Itoa(db)
	if ok {
		return u.String()
	}
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatalf("testenv: flush redis: %v", err)
	}
	return u.String()
}

// Redis returns a client on this test's Redis database.
func Redis(t testing.TB, url string) *redis.Client {
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// RandomKey returns a random 32-byte key as hex.
func RandomKey() string { return randHex(32) }
