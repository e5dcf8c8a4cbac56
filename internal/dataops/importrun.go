package dataops

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/contacts"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// progressEvery is how many rows are checked between two progress reports.
const progressEvery = 2500

// Progress is what an import reports while it runs (the task's result in
// the asynq UI, until the final result replaces it).
type Progress struct {
	Status        string `json:"status"`
	TotalRows     int    `json:"total_rows"`
	ProcessedRows int    `json:"processed_rows"`
}

// RunImport runs a stored import (the dataops:import job): it checks every
// row, then writes the good ones and the result in one transaction, which
// first locks the import's row and returns the stored result when the
// import is already done, so that a retry or a second delivery never
// writes or counts twice. Progress and then the result are written to out
// as JSON. The file's bytes are cleared with the result.
func (s *Service) RunImport(ctx context.Context, orgID, id uuid.UUID, out io.Writer) (*ImportResult, error) {
	job, err := tenant.Get[models.ImportJob](ctx, s.db, orgID, id, "import job not found")
	if apperr.Is(err, apperr.NotFound) {
		return nil, fmt.Errorf("import %s: %w: %w", id, err, asynq.SkipRetry) // deleted with its organization
	}
	if err != nil {
		return nil, err
	}
	if job.Status == models.ImportDone {
		return s.finish(ctx, orgID, id, out)
	}
	if job.Status == models.ImportFailed || job.File == nil {
		return nil, fmt.Errorf("import %s is %s: %w", id, job.Status, asynq.SkipRetry)
	}
	report := func(status string, done int) {
		b, _ := json.Marshal(Progress{Status: status, TotalRows: job.TotalRows, ProcessedRows: done})
		_, _ = out.Write(b)
		if err := s.db.WithContext(ctx).Model(&models.ImportJob{}).Where("id = ? AND status IN ?", id, []string{models.ImportQueued, models.ImportRunning}).
			Updates(map[string]any{"status": models.ImportRunning, "processed_rows": done}).Error; err != nil {
			s.log.Warn("cannot record an import's progress", "id", id, "error", err)
		}
		s.announce(ctx, orgID, job, status, done)
	}
	if err := s.db.WithContext(ctx).Model(&models.ImportJob{}).Where("id = ? AND status IN ?", id, []string{models.ImportQueued, models.ImportRunning}).
		Updates(map[string]any{"status": models.ImportRunning, "started_at": time.Now(), "attempts": gorm.Expr("attempts + 1")}).Error; err != nil {
		return nil, err
	}
	report(models.ImportRunning, 0)
	// The api checked the file and its headers; they only fail here if the
	// rules changed in between, which no retry mends.
	t, err := tableOf(job.Table)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	f, err := parseCSV(job.File)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	p, err := t.planImport(f.header, job.ColumnMapping.V)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, asynq.SkipRetry)
	}
	progress := func(done int) { report(models.ImportRunning, done) }
	var c *checked
	if t.name == "contacts" {
		d, err := s.directory(ctx, orgID)
		if err != nil {
			return nil, err
		}
		c = checkContacts(f, p, d, progress)
	} else {
		c = checkTags(f, p, progress)
	}
	report(models.ImportRunning, len(f.records))
	var events []uuid.UUID
	created := 0
	err = s.withCopy(ctx, func(conn *gorm.DB, copyRows contacts.CopyFunc) error {
		return conn.Transaction(func(tx *gorm.DB) error {
			var locked models.ImportJob
			if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Select("id", "status").
				Where("organization_id = ?", orgID).Take(&locked, "id = ?", id).Error; err != nil {
				return err
			}
			if locked.Status == models.ImportDone {
				return nil // another run finished it meanwhile
			}
			// The contacts' trigram index takes the new rows into its pending
			// list and merges them later (its fastupdate), instead of inserting
			// each row's trigrams now: the default 4 MB list fills a few
			// thousand rows into a 10,000-row import.
			if err := tx.Exec(`SET LOCAL gin_pending_list_limit = '64MB'`).Error; err != nil {
				return err
			}
			n, ids, err := s.write(ctx, tx, copyRows, orgID, t.name, c, job.UpdateOnDuplicate)
			if err != nil {
				return err
			}
			events, created = ids, n.Created
			valid := len(c.contacts) + len(c.tags)
			res := ImportResult{Created: n.Created, Updated: n.Updated, Skipped: c.duplicates + valid - n.Created - n.Updated,
				Errors: c.errors}
			res.Messages, res.RedactedMessages = c.msgs.final()
			b, err := json.Marshal(res)
			if err != nil {
				return err
			}
			return tx.Model(&models.ImportJob{}).Where("id = ?", id).Updates(map[string]any{"status": models.ImportDone,
				"result": b, "file": nil, "processed_rows": len(f.records), "finished_at": time.Now(), "error": ""}).Error
		})
	})
	if err != nil {
		return nil, err
	}
	if t.name == "contacts" {
		s.refreshContactStats(ctx, created)
	}
	s.contacts.PublishCreated(ctx, orgID, events)
	s.announce(ctx, orgID, job, models.ImportDone, len(f.records))
	return s.finish(ctx, orgID, id, out)
}

// withCopy runs f on one connection of the pool, with a CopyFunc that
// copies rows over that same connection (pgx's CopyFrom under
// database/sql), so that a transaction f begins on conn can COPY into its
// own temporary tables.
func (s *Service) withCopy(ctx context.Context, f func(conn *gorm.DB, copyRows contacts.CopyFunc) error) error {
	return s.db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		sc, ok := conn.Statement.ConnPool.(*sql.Conn)
		if !ok {
			return fmt.Errorf("import: the connection is a %T, not a *sql.Conn", conn.Statement.ConnPool)
		}
		copyRows := func(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
			var n int64
			err := sc.Raw(func(dc any) error {
				pc, ok := dc.(*stdlib.Conn)
				if !ok {
					return fmt.Errorf("import: the driver's connection is a %T, not pgx's", dc)
				}
				var err error
				n, err = pc.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
				return err
			})
			return n, err
		}
		return f(conn, copyRows)
	})
}

// finish answers a done import's stored result and writes it to out.
func (s *Service) finish(ctx context.Context, orgID, id uuid.UUID, out io.Writer) (*ImportResult, error) {
	j, err := s.ImportJobOf(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if j.Result == nil {
		return nil, errors.New("import done without a result")
	}
	b, _ := json.Marshal(j.Result)
	_, err = out.Write(b)
	return j.Result, err
}

// FailImport records that an import failed for good (its last attempt, or
// an error no retry mends): its file is cleared and its progress endpoint
// says why.
func (s *Service) FailImport(ctx context.Context, orgID, id uuid.UUID, cause error) error {
	var failed []models.ImportJob
	err := s.db.WithContext(ctx).Model(&failed).Clauses(clause.Returning{Columns: []clause.Column{{Name: "id"}, {Name: "table_name"},
		{Name: "total_rows"}, {Name: "processed_rows"}}}).
		Where("id = ? AND organization_id = ? AND status <> ?", id, orgID, models.ImportDone).
		Updates(map[string]any{"status": models.ImportFailed, "file": nil, "error": apperr.Clip(cause.Error(), 500),
			"finished_at": time.Now()}).Error
	for i := range failed {
		s.announce(ctx, orgID, &failed[i], models.ImportFailed, failed[i].ProcessedRows)
	}
	return err
}

// bigImport is the number of new contacts from which an import refreshes
// the table's statistics itself, when they are also a tenth of the table.
const bigImport = 5000

// refreshContactStats runs after an import that created many contacts
// (issue 21): ANALYZE contacts, so that the planner knows the organization's
// new size at once rather than when autovacuum next comes by, and the
// trigram index's pending list (the import filled it, gin_pending_list_limit
// above) is merged, so that searches do not read it row by row. Both only
// help: a failure is logged, the import stands.
func (s *Service) refreshContactStats(ctx context.Context, created int) {
	if created < bigImport {
		return
	}
	db := s.db.WithContext(ctx)
	var rows float64
	if err := db.Raw(`SELECT reltuples FROM pg_class WHERE oid = 'contacts'::regclass`).Scan(&rows).Error; err != nil {
		s.log.Warn("cannot read the contacts' size", "error", err)
		return
	}
	if float64(created) < rows/10 {
		return
	}
	// On two connections at once: neither waits for the other (ANALYZE's
	// lock on the table lets the index's cleanup in), and the import is
	// reported done when both are.
	var wg sync.WaitGroup
	for _, q := range []string{`ANALYZE contacts`, `SELECT gin_clean_pending_list('contacts_search'::regclass)`} {
		wg.Go(func() {
			if err := db.Exec(q).Error; err != nil {
				s.log.Warn("cannot refresh the contacts' statistics after an import", "statement", q, "error", err)
			}
		})
	}
	wg.Wait()
}
