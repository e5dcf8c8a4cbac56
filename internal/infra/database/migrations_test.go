package database_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"wharf/internal/infra/database"
	"wharf/internal/testenv"
	"wharf/migrations"
)

// 00009 moves the template id of template sends out of content into the
// typed column: a template send stored before it gets its template's id; a
// value that names no template of the organization (an unknown id, or not
// a uuid) is left NULL rather than failing the migration.
func TestMigrationBackfillsMessageTemplateID(t *testing.T) {
	t.Parallel()
	dsn := testenv.EmptyDatabaseURL(t)
	ctx := context.Background()
	if err := database.EnsureDatabase(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 8); err != nil {
		t.Fatal(err)
	}
	org, other, acc, contact, tmpl, foreign := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	sent, alien, malformed := uuid.New(), uuid.New(), uuid.New()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO organizations (id, name, slug) VALUES ($1, 'o', $3), ($2, 'p', $4)`, []any{org, other, org.String(), other.String()}},
		{`INSERT INTO platform_accounts (id, organization_id, name, phone_number_id, business_account_id, access_token_enc, status)
		  VALUES ($1, $2, 'a', '1', '2', '\x00', 'active')`, []any{acc, org}},
		{`INSERT INTO contacts (id, organization_id, phone_number) VALUES ($1, $2, '+15550000000')`, []any{contact, org}},
		{`INSERT INTO templates (id, organization_id, account_id, name, language, category, status)
		  VALUES ($1, $2, $3, 'hello', 'en', 'UTILITY', 'APPROVED')`, []any{tmpl, org, acc}},
		{`INSERT INTO messages (id, organization_id, contact_id, account_id, direction, type, status, occurred_at, content) VALUES
		  ($1, $4, $5, $6, 'outgoing', 'template', 'pending', now(), jsonb_build_object('template_id', $7::text)),
		  ($2, $4, $5, $6, 'outgoing', 'template', 'pending', now(), jsonb_build_object('template_id', $8::text)),
		  ($3, $4, $5, $6, 'outgoing', 'template', 'pending', now(), '{"template_id": "not-a-uuid"}')`,
			[]any{sent, alien, malformed, org, contact, acc, tmpl, foreign}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.UpTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uuid.UUID]*uuid.UUID{sent: &tmpl, alien: nil, malformed: nil} {
		var got *uuid.UUID
		if err := db.QueryRowContext(ctx, `SELECT template_id FROM messages WHERE id = $1`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("message %s: template_id %v, want %v", id, got, want)
		}
	}
}
