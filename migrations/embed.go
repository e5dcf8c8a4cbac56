// Package migrations embeds the numbered goose SQL migrations.
//
// Add a migration by creating NNNNN_description.sql with `-- +goose Up` and
// `-- +goose Down` sections; bin/api applies it at the next start.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
