// Package database opens PostgreSQL through gorm and applies the embedded
// goose migrations.
//
// Migrations run under a PostgreSQL session advisory lock so that two api
// replicas starting together apply each migration once: the second waits for
// the lock, then finds nothing pending.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"wharf/migrations"
)

// Open connects to dsn. Sessions run in UTC so that timestamps read back
// render as RFC 3339 UTC without per-field conversion surprises, and
// without JIT compilation (sessionDefaults).
func Open(ctx context.Context, dsn string, log *slog.Logger) (*gorm.DB, error) {
	dsn, err := sessionDefaults(dsn)
	if err != nil {
		return nil, err
	}
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{
		TranslateError: true,
		Logger:         logger.Discard,
		NowFunc:        func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	// As many idle connections as open ones: with fewer, a burst of more
	// than the idle limit closed a connection each time one was returned
	// without a waiter, and the next burst opened it again (a PostgreSQL
	// backend started, its statement cache empty): 90 new sessions a second
	// under the template-send benchmark. Peak use is bounded by the open
	// limit either way; idle ones close after the idle time.
	sqlDB.SetMaxOpenConns(25)
	sqlDB.SetMaxIdleConns(25)
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return db, nil
}

// Close releases the pool behind db.
func Close(db *gorm.DB) {
	if sqlDB, err := db.DB(); err == nil {
		_ = sqlDB.Close()
	}
}

// sessionDefaults sets the session parameters Wharf's connections run
// with, unless the DSN sets them: timezone UTC, and jit off. PostgreSQL
// compiles a statement whose estimated cost passes jit_above_cost, and for
// the statements of a request that compilation cost more than the work: the
// first rows of a 100,000-contact export took 144 ms with JIT and 41 ms
// without, and a plain run of its query 1.6 s (1.5 s of it compiling)
// against 0.2 s (docs/BENCHMARKS.md, "JIT off"). A DSN may still turn it
// on (jit=on) for a deployment that measures otherwise.
func sessionDefaults(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("DATABASE_URL: %w", err)
	}
	q := u.Query()
	if q.Get("timezone") == "" {
		q.Set("timezone", "UTC")
	}
	if q.Get("jit") == "" {
		q.Set("jit", "off")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// lockID identifies Wharf's migration lock among other advisory locks.
const lockID int64 = 0x5768617266 // "Wharf"

// Migrate applies every pending migration under the advisory lock.
func Migrate(ctx context.Context, dsn string, log *slog.Logger) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID), lock.WithLockTimeout(1, 600))
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	results, err := p.Up(ctx)
	for _, r := range results {
		log.Info("migration applied", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// EnsureDatabase creates the database named in dsn when the server is
// reachable but the database does not exist yet, so that a fresh machine needs
// no manual createdb. It is a no-op when the database exists.
func EnsureDatabase(ctx context.Context, dsn string) error {
	conn, err := pgconn.Connect(ctx, dsn)
	if err == nil {
		return conn.Close(ctx)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" { // invalid_catalog_name
		return fmt.Errorf("connect to database: %w", err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return err
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := pgconn.Connect(ctx, u.String())
	if err != nil {
		return fmt.Errorf("connect to maintenance database: %w", err)
	}
	defer admin.Close(ctx)
	ident := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident).ReadAll(); err != nil {
		// Created meanwhile by a replica starting at the same time: 42P04, or
		// 23505 when both inserted into pg_database at once.
		if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
			return nil
		}
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// Ping checks that the database answers, for readiness probes.
func Ping(ctx context.Context, db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

var _ = stdlib.GetDefaultDriver // registers the "pgx" database/sql driver
