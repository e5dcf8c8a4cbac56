package docframe

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/jobs"
)

// valueExpr is the SQL expression of a field's stored value, typed for
// comparison: numeric for numbers, text in the C collation for dates (text
// order is date order there, whatever the database's collation), text
// otherwise. Filters, ordering and the field indexes use this one function,
// so that an index's expression is exactly the one a filter compares and
// the planner can use it. fieldname is safe to inline: DocType validation
// holds it to ^[a-z][a-z0-9_]*$.
func valueExpr(f *Field) string {
	switch f.kind() {
	case kindInt, kindFloat:
		return fmt.Sprintf("((data ->> '%s')::numeric)", f.Fieldname)
	case kindDate, kindDatetime:
		return fmt.Sprintf(`((data ->> '%s') COLLATE "C")`, f.Fieldname)
	}
	return fmt.Sprintf("(data ->> '%s')", f.Fieldname)
}

// textExpr is a field's value as text, for like and search_term.
func textExpr(f *Field) string { return fieldText(f.Fieldname) }

// fieldText is the text of a field by name, as its index stores it (the
// name is checked by the caller: fieldnameRE).
func fieldText(name string) string { return fmt.Sprintf("(data ->> '%s')", name) }

// fieldIndex is one index a DocType's field asks for.
type fieldIndex struct {
	name    string
	org     uuid.UUID
	doctype string
	field   string
	unique  bool
	expr    string // the one expression statistics are kept for ("" for none)
	columns string
	method  string // the access method: "" for btree, "gin" for the search index
}

// fieldIndexes are the indexes dt's fields ask for (unique: 1 gives a
// unique index, search_index: 1 a plain one), named after what they index so
// that a definition's change reconciles them by name.
func fieldIndexes(orgID uuid.UUID, dt *DocType) map[string]fieldIndex {
	out := map[string]fieldIndex{}
	if dt == nil || dt.Istable.On() {
		return out
	}
	for i := range dt.Fields {
		f := &dt.Fields[i]
		if !f.Unique.On() && !f.SearchIndex.On() {
			continue
		}
		ix := fieldIndex{org: orgID, doctype: dt.Name, field: f.Fieldname, unique: f.Unique.On(), expr: valueExpr(f)}
		ix.columns = ix.expr
		if !ix.unique {
			// The default order after the value: an equality filter then
			// reads its rows in list order and stops at the page's end.
			ix.columns += ", modified DESC, name DESC"
		}
		ix.name = indexName(ix)
		out[ix.name] = ix
	}
	if ix, ok := searchIndex(orgID, dt); ok {
		out[ix.name] = ix
	}
	return out
}

// indexName names an index after what it indexes, so that a definition's
// change reconciles indexes by name. The search index's columns carry
// their operator class, so its name never equals a btree index's.
func indexName(ix fieldIndex) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%t", ix.org, ix.doctype, ix.columns, ix.unique)))
	return "dfx_" + hex.EncodeToString(sum[:12])
}

// searchIndex is the trigram index search_term reads (searchCondition:
// name ILIKE '%term%' OR (data ->> 'f') ILIKE '%term%' for the title field
// and the search fields): one GIN index over exactly those expressions,
// textually the ones the condition compares (fieldText), so that each arm
// of the OR is a scan of it and the planner combines them (BitmapOr) instead
// of reading every document of the DocType. pg_trgm's GIN class also
// serves the = that a masked number field is compared with.
//
// Only a DocType whose search condition names a field has one: name alone
// is what every DocType searches, and an index on it for every DocType
// (most of them small, most never searched by a fragment) would be one
// more index on the shared documents table kept up by every write. A
// DocType with a title field or search fields asked for its search; it gets
// the index, at most one per DocType whatever the number of fields.
//
// Only custom DocTypes (an organization's own) get it. The built-in ones
// (Wharf Message, Template, Account, Flow, Notification, the bulk
// DocTypes) are written on the core's hot paths: a Wharf Message document
// for every incoming message of an organization using the integration, so a
// trigram index there would be paid by every message, and their lists are
// searched by their indexed fields (search_index) far more than by
// fragments.
func searchIndex(orgID uuid.UUID, dt *DocType) (fieldIndex, bool) {
	if !dt.Custom.On() {
		return fieldIndex{}, false
	}
	cols := []string{"name gin_trgm_ops"}
	seen := map[string]bool{}
	for _, sf := range append([]string{dt.TitleField}, splitList(dt.SearchFields)...) {
		f, ok := fieldByName(dt, sf)
		if sf == "" || seen[sf] || !ok || f.kind() == kindPassword || f.kind() == kindTable {
			continue // what documentSource leaves out of the search
		}
		seen[sf] = true
		cols = append(cols, fieldText(sf)+" gin_trgm_ops")
	}
	if len(cols) == 1 {
		return fieldIndex{}, false
	}
	ix := fieldIndex{org: orgID, doctype: dt.Name, field: "search_fields", columns: strings.Join(cols, ", "), method: "gin"}
	ix.name = indexName(ix)
	return ix, true
}

// Limits of a definition: past them a save is refused (417). Every indexed
// field is an index on the documents table that every organization
// shares, kept up to date by every write of the DocType's documents.
const (
	MaxFields        = 300
	MaxIndexedFields = 20
)

// checkLimits refuses a definition past the limits.
func checkLimits(dt *DocType) error {
	if n := len(dt.Fields); n > MaxFields {
		return Validationf("DocType %s has %d fields: at most %d are allowed", dt.Name, n, MaxFields)
	}
	indexed := 0
	for _, f := range dt.Fields {
		if f.Unique.On() || f.SearchIndex.On() {
			indexed++
		}
	}
	if indexed > MaxIndexedFields {
		return Validationf("DocType %s has %d unique or indexed (search_index) fields: at most %d are allowed", dt.Name, indexed, MaxIndexedFields)
	}
	return nil
}

// indexChange is what a definition change does to the indexes: the names
// the old definition had and the new one does not (to drop), and whether
// anything is to build or drop.
func indexChange(orgID uuid.UUID, old, next *DocType) (drop []string, changed bool) {
	have, want := fieldIndexes(orgID, old), fieldIndexes(orgID, next)
	for name := range have {
		if _, keep := want[name]; !keep {
			drop = append(drop, name)
		}
	}
	for name := range want {
		if _, ok := have[name]; !ok {
			changed = true
		}
	}
	slices.Sort(drop)
	return drop, changed || len(drop) > 0
}

// checkUniqueable refuses, in the saving transaction, to make a field
// unique while documents share a value of it (the index would never
// build). The index comes later (BuildIndexes); until it is valid the
// framework's own check (checkUnique) enforces the field.
func checkUniqueable(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, old, next *DocType) error {
	have := fieldIndexes(orgID, old)
	for name, ix := range fieldIndexes(orgID, next) {
		if _, ok := have[name]; ok || !ix.unique {
			continue
		}
		var dup bool
		if err := tx.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM docframe_documents WHERE organization_id = ? AND doctype = ?
			AND `+ix.expr+` IS NOT NULL GROUP BY `+ix.expr+` HAVING count(*) > 1)`, orgID, next.Name).Scan(&dup).Error; err != nil {
			return err
		}
		if dup {
			return Validationf("field %s cannot become unique while documents share a value of it", ix.field)
		}
	}
	return nil
}

// checkUnique enforces d's unique fields before its row is written: under
// a transaction-scoped advisory lock on (organization, DocType, field,
// value), so that two writers of one value take turns and the second sees
// the first's committed row. It holds while a unique index is still being
// built (the index, once valid, is the backstop). Only writers of the same
// value wait.
func checkUnique(ctx context.Context, tx *gorm.DB, m *meta, d *Doc) error {
	for _, f := range m.valueFields() {
		v := d.Fields[f.Fieldname]
		if !f.Unique.On() || v == nil {
			continue
		}
		text := fmt.Sprint(v)
		key := fmt.Sprintf("docframe:unique\x1f%s\x1f%s\x1f%s\x1f%s", d.OrganizationID, m.Name, f.Fieldname, text)
		if err := tx.WithContext(ctx).Exec(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, key).Error; err != nil {
			return err
		}
		var other string
		if err := tx.WithContext(ctx).Raw(`SELECT name FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND name <> ?
			AND `+textExpr(f)+` = ? LIMIT 1`, d.OrganizationID, m.Name, d.Name, text).Scan(&other).Error; err != nil {
			return err
		}
		if other != "" {
			return duplicatef("%s %s is already used by %s %s: %s must be unique", f.label(), show(v), m.Name, other, f.label())
		}
	}
	return nil
}

// scheduleIndexes has the worker build and drop a DocType's indexes once
// its change committed (jobs.DocframeIndexes). A lost task is made good by
// the sweep; without an enqueuer (tests, tools) BuildIndexes is called
// directly.
func (s *Service) scheduleIndexes(ctx context.Context, orgID uuid.UUID, doctype string, drop []string) {
	if s.enq == nil {
		return
	}
	if _, err := s.enq.Enqueue(context.WithoutCancel(ctx), jobs.DocframeIndexes{OrganizationID: orgID, Doctype: doctype, Drop: drop}); err != nil {
		s.log.Warn("docframe: cannot enqueue an index build; the index sweep will do it", "doctype", doctype, "error", err)
	}
}

// BuildIndexes brings a DocType's field indexes in line with its stored
// definition (the worker's docframe:indexes): the indexes in drop that the
// definition no longer wants are dropped, the wanted ones that are missing
// or invalid are built. Every statement is CONCURRENTLY and outside any
// transaction, so the documents table stays open to every organization's
// writes; builds run one at a time (ddlLock). Idempotent.
func (s *Service) BuildIndexes(ctx context.Context, orgID uuid.UUID, doctype string, drop []string) error {
	return s.withDDLLock(ctx, func(conn *sql.Conn) error {
		// The definition as it is now, read under the lock: a later change
		// overtakes an earlier one's task.
		m, err := loadMeta(ctx, s.db, orgID, doctype)
		if err != nil && !isNotFound(err) {
			return err
		}
		var def *DocType
		if m != nil {
			def = &m.DocType
		}
		want := fieldIndexes(orgID, def)
		for _, name := range drop {
			if _, keep := want[name]; !keep && strings.HasPrefix(name, "dfx_") {
				if err := dropIndex(ctx, conn, name); err != nil {
					return err
				}
			}
		}
		names := slices.Sorted(maps.Keys(want))
		valid, err := indexStates(ctx, conn, names)
		if err != nil {
			return err
		}
		for _, name := range names {
			if err := s.buildIndex(ctx, conn, want[name], valid); err != nil {
				return err
			}
		}
		return nil
	})
}

// SweepIndexes makes good what lost or crashed builds left (the worker's
// docframe:index_sweep, every few minutes): every index a definition wants
// and that is missing or invalid is built, every field index no definition
// wants is dropped. It answers how many it built and dropped. The DocTypes
// it reads are those with an indexed field or with search fields (a title
// field or search_fields of a custom DocType: searchIndex); the others want
// no index.
func (s *Service) SweepIndexes(ctx context.Context) (built, dropped int, err error) {
	err = s.withDDLLock(ctx, func(conn *sql.Conn) error {
		var rows []doctypeRow
		if err := s.db.WithContext(ctx).Select("organization_id", "name", "definition").
			Where(`NOT istable AND (jsonb_path_exists(definition -> 'fields', '$[*] ? (@.unique == 1 || @.search_index == 1)')
				OR (custom AND (title_field <> '' OR search_fields <> '')))`).
			Find(&rows).Error; err != nil {
			return err
		}
		want := map[string]fieldIndex{}
		for i := range rows {
			m, err := rows[i].meta()
			if err != nil {
				return err
			}
			maps.Copy(want, fieldIndexes(rows[i].OrganizationID, &m.DocType))
		}
		valid, err := indexStates(ctx, conn, nil)
		if err != nil {
			return err
		}
		for _, name := range slices.Sorted(maps.Keys(want)) {
			if ok, exists := valid[name]; exists && ok {
				continue
			}
			if err := s.buildIndex(ctx, conn, want[name], valid); err != nil {
				return err
			}
			built++
		}
		for name := range valid {
			if _, ok := want[name]; !ok {
				if err := dropIndex(ctx, conn, name); err != nil {
					return err
				}
				dropped++
			}
		}
		return nil
	})
	return built, dropped, err
}

// withDDLLock runs fn on a connection of its own, outside any transaction
// (CREATE INDEX CONCURRENTLY refuses to run inside one), holding a
// session advisory lock: index DDL of every organization runs one
// statement at a time across processes (two concurrent builds on one table
// would wait on each other anyway, and the statistics objects are shared).
// The lock blocks no document write. It is tried, not waited for: a
// session waiting for it would be a transaction the holder's CREATE INDEX
// CONCURRENTLY waits for in turn (a deadlock). The connection is discarded
// afterwards, which releases the lock whatever happened (a cancelled build
// included).
func (s *Service) withDDLLock(ctx context.Context, fn func(*sql.Conn) error) error {
	pool, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Raw(func(any) error { return driver.ErrBadConn }) }()
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var got bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(hashtext('docframe:ddl'))`).Scan(&got); err != nil {
			return err
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	return fn(conn)
}

// indexStates answers the field indexes that exist on the documents table
// (named, or all of them for nil) and whether each is valid: an index a
// concurrent build left behind when it failed or was cancelled exists but
// is invalid (not used, still maintained by writes) until it is replaced.
func indexStates(ctx context.Context, conn *sql.Conn, names []string) (map[string]bool, error) {
	q := `SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = 'docframe_documents'::regclass AND c.relname LIKE 'dfx\_%'`
	var args []any
	if names != nil {
		q += ` AND c.relname = ANY($1::text[])`
		args = append(args, "{"+strings.Join(names, ",")+"}") // names are dfx_ and hex digits
	}
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		var valid bool
		if err := rows.Scan(&name, &valid); err != nil {
			return nil, err
		}
		out[name] = valid
	}
	return out, rows.Err()
}

// buildIndex builds one wanted index unless it exists and is valid: an
// invalid leftover is dropped first (IF NOT EXISTS would keep it). A
// unique index over documents that share a value is not built (logged):
// it could not be, and the framework's check enforces the field for new
// writes meanwhile.
func (s *Service) buildIndex(ctx context.Context, conn *sql.Conn, ix fieldIndex, valid map[string]bool) error {
	if ok, exists := valid[ix.name]; !exists || !ok {
		if exists {
			if err := dropIndex(ctx, conn, ix.name); err != nil {
				return err
			}
		}
		predicate := fmt.Sprintf(`organization_id = %s AND doctype = %s`, quoteLiteral(ix.org.String()), quoteLiteral(ix.doctype))
		unique := ""
		if ix.unique {
			unique = "UNIQUE "
			var dup bool
			if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM docframe_documents WHERE `+predicate+` AND `+ix.expr+
				` IS NOT NULL GROUP BY `+ix.expr+` HAVING count(*) > 1)`).Scan(&dup); err != nil {
				return err
			}
			if dup {
				s.log.Error("docframe: unique index not built: documents share a value of the field", "organization_id", ix.org,
					"doctype", ix.doctype, "field", ix.field, "index", ix.name)
				return nil
			}
		}
		using := ""
		if ix.method != "" {
			using = "USING " + ix.method + " "
		}
		ddl := fmt.Sprintf(`CREATE %sINDEX CONCURRENTLY IF NOT EXISTS %s ON docframe_documents %s(%s) WHERE %s`, unique, ix.name, using, ix.columns, predicate)
		if _, err := conn.ExecContext(ctx, ddl); err != nil {
			// A failed concurrent build leaves an invalid index: drop it now
			// (or the next try does).
			_ = dropIndex(context.WithoutCancel(ctx), conn, ix.name)
			return fmt.Errorf("docframe: building index %s of %s: %w", ix.name, ix.doctype, err)
		}
	}
	// The planner ignores a partial index's own statistics, so without
	// these it guesses 0.5 % of rows for an equality and prefers reading
	// the list order and filtering: expression statistics (one per
	// expression, shared by every organization and DocType, filled by
	// ANALYZE) give it the value's real frequency. CREATE STATISTICS does
	// not block writes. The search index has none: a fragment's
	// selectivity is not what an expression's statistics describe.
	if ix.expr == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(ix.expr))
	_, err := conn.ExecContext(ctx, fmt.Sprintf(`CREATE STATISTICS IF NOT EXISTS dfs_%s ON %s FROM docframe_documents`,
		hex.EncodeToString(sum[:12]), ix.expr))
	return err
}

func dropIndex(ctx context.Context, conn *sql.Conn, name string) error {
	_, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name)
	return err
}

// quoteLiteral quotes a string for SQL (standard_conforming_strings is on,
// the default since PostgreSQL 9.1). Only DDL uses it: index predicates
// cannot be parameters. Inputs are a UUID and a validated DocType name.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
