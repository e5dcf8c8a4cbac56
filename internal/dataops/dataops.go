// Package dataops moves the organization's contacts and tags in and out as
// CSV. Exports stream: rows are read through a server-side cursor in
// batches and written as they come, so a million contacts never sit in
// memory. Imports are worker jobs: the api checks the file and stores it in
// import_jobs, the worker checks each row and writes the good ones
// set-based in one transaction with the result, so that a retry never
// writes twice.
//
// Files: tables.go (the columns of each table), export.go, csvfile.go (the
// import file's format), importplan.go (headers to columns), importrows.go
// (per-row checks), importjobs.go (the api's side of an import),
// importrun.go (the worker's).
package dataops

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/contacts"
	"wharf/internal/infra/live"
	"wharf/internal/orgsettings"
	"wharf/jobs"
)

// Maskers gives an organization's phone-number masker (orgsettings).
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Members lists an organization's members (the identity domain).
type Members interface {
	MemberIDs(ctx context.Context, orgID uuid.UUID) ([]uuid.UUID, error)
}

// Contacts writes an import's checked rows (internal/contacts owns the
// contacts and tags tables, their counts and their events).
type Contacts interface {
	Import(ctx context.Context, tx *gorm.DB, copyRows contacts.CopyFunc, orgID uuid.UUID, rows []contacts.ImportRow, update bool) (contacts.ImportCounts, []uuid.UUID, error)
	ImportTags(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, rows []contacts.TagImportRow, update bool) (contacts.ImportCounts, error)
	PublishCreated(ctx context.Context, orgID uuid.UUID, eventIDs []uuid.UUID)
}

// Deps are the data operations domain's dependencies.
type Deps struct {
	DB       *gorm.DB
	Maskers  Maskers
	Contacts Contacts
	// Members lists the organization's members (identity): an import's
	// assigned agents must be members.
	Members  Members
	Enqueuer *jobs.Enqueuer
	// Live publishes the event stream's import.progress events (nil: none).
	Live live.Publisher
	Log  *slog.Logger
}

// Service exports and imports contacts and tags.
type Service struct {
	db       *gorm.DB
	maskers  Maskers
	contacts Contacts
	members  Members
	enq      *jobs.Enqueuer
	live     live.Publisher
	log      *slog.Logger
}

// NewService wires the data operations domain.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, maskers: d.Maskers, contacts: d.Contacts, members: d.Members, enq: d.Enqueuer, live: live.Or(d.Live), log: d.Log}
}
