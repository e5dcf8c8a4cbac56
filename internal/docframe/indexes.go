package docframe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"
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
func textExpr(f *Field) string { return fmt.Sprintf("(data ->> '%s')", f.Fieldname) }

// fieldIndex is one index a DocType's field asks for.
type fieldIndex struct {
	name    string
	unique  bool
	expr    string
	columns string
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
		ix := fieldIndex{unique: f.Unique.On(), expr: valueExpr(f)}
		ix.columns = ix.expr
		if !ix.unique {
			// The default order after the value: an equality filter then
			// reads its rows in list order and stops at the page's end.
			ix.columns += ", modified DESC, name DESC"
		}
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%t", orgID, dt.Name, ix.columns, ix.unique)))
		ix.name = "dfx_" + hex.EncodeToString(sum[:12])
		out[ix.name] = ix
	}
	return out
}

// reconcileIndexes drops the indexes old asked for that next does not and
// creates the new ones (nil next: the DocType goes). They are partial
// indexes on the organization and DocType, built inside the DocType's
// transaction so that a unique field is enforced from the moment its
// definition commits; the build locks the documents table against writes
// for its duration (quick for a new DocType; see docs/FRAMEWORK.md).
func reconcileIndexes(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, old, next *DocType) error {
	have, want := fieldIndexes(orgID, old), fieldIndexes(orgID, next)
	if len(have) == 0 && len(want) == 0 {
		return nil
	}
	// DDL of every organization's DocTypes one at a time: the statistics
	// objects below are shared, and IF NOT EXISTS does not make two
	// concurrent creations of one safe.
	if err := tx.WithContext(ctx).Exec(`SELECT pg_advisory_xact_lock(hashtext('docframe:ddl'))`).Error; err != nil {
		return err
	}
	for name := range have {
		if _, keep := want[name]; !keep {
			if err := tx.WithContext(ctx).Exec(`DROP INDEX IF EXISTS ` + name).Error; err != nil {
				return err
			}
		}
	}
	for name, ix := range want {
		if _, ok := have[name]; ok {
			continue
		}
		unique := ""
		if ix.unique {
			unique = "UNIQUE "
		}
		ddl := fmt.Sprintf(`CREATE %sINDEX IF NOT EXISTS %s ON docframe_documents (%s) WHERE organization_id = %s AND doctype = %s`,
			unique, name, ix.columns, quoteLiteral(orgID.String()), quoteLiteral(next.Name))
		if err := tx.WithContext(ctx).Exec(ddl).Error; err != nil {
			if ix.unique && isDuplicate(err) {
				return Validationf("a field cannot become unique while documents share a value of it")
			}
			return err
		}
		// The planner ignores a partial index's own statistics, so
		// without these it guesses 0.5 % of rows for an equality and
		// prefers reading the list order and filtering: expression
		// statistics (one per expression, shared by every organization
		// and DocType, filled by ANALYZE) give it the value's real
		// frequency.
		sum := sha256.Sum256([]byte(ix.expr))
		stats := fmt.Sprintf(`CREATE STATISTICS IF NOT EXISTS dfs_%s ON %s FROM docframe_documents`, hex.EncodeToString(sum[:12]), ix.expr)
		if err := tx.WithContext(ctx).Exec(stats).Error; err != nil {
			return err
		}
	}
	return nil
}

// quoteLiteral quotes a string for SQL (standard_conforming_strings is on,
// the default since PostgreSQL 9.1). Only DDL uses it: index predicates
// cannot be parameters. Inputs are a UUID and a validated DocType name.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
