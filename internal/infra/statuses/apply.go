package statuses

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/models"
)

// Table says how outcomes apply to one table of sent messages. Rows are
// matched by platform_message_id, or, for a send whose answer was lost (no
// provider id yet), by the row id the send put in the callback data.
type Table struct {
	Name  string // the table, e.g. "messages"
	Alias string // its alias in the statements, e.g. "m"
	// Stages names the table's statuses before the send; the statement
	// that moves a row forward is written from them and the one order
	// (order.go).
	Stages Stages
	// Scope restricts the rows (tenant, account) with the named parameters
	// @org and @acc.
	Scope string
	// Returning is the uuid column returned for each changed row
	// (Result.Changed).
	Returning string
	// CallbackID reads our row id from an outcome's callback data; ok is
	// false for callbacks that name rows of another table.
	CallbackID func(callback string) (id uuid.UUID, ok bool)
}

// Applier applies outcomes to one Table.
type Applier struct {
	t                              Table
	lock, update, known, reconcile string
}

// NewApplier prepares the statements of t.
func NewApplier(t Table) *Applier {
	r := strings.NewReplacer("{t}", t.Name, "{a}", t.Alias, "{next}", t.Stages.NextSQL(t.Alias), "{scope}", t.Scope, "{ret}", t.Returning,
		"{sent}", quoteAll(append(Reached(models.StatusSent), string(models.StatusFailed))), "{delivered}", quoteAll(Reached(models.StatusDelivered)),
		"{read}", quoteAll(Reached(models.StatusRead)), "{failed}", quote(string(models.StatusFailed)), "{unknown}", quote(string(models.RecipientUnknown)))
	return &Applier{t: t,
		lock:      r.Replace(lockSQL),
		update:    r.Replace(updateSQL),
		known:     r.Replace(`SELECT {a}.platform_message_id FROM {t} {a} WHERE {scope} AND {a}.platform_message_id IN @pids`),
		reconcile: r.Replace(reconcileSQL),
	}
}

// lockSQL locks every row a batch may change, in id order, before any
// update. Two batches touching the same rows then wait for each other
// instead of each holding some rows and waiting for the others' (a
// deadlock): the update statement alone locks rows in whatever order its
// plan visits them, which with an index nested loop is the order of the
// batch.
const lockSQL = `SELECT {a}.id FROM {t} {a} WHERE {scope} AND ({a}.platform_message_id IN @pids OR {a}.id IN @ids)
ORDER BY {a}.id FOR UPDATE`

// reconcileSQL gives a row without a provider id the one of an outcome
// whose callback data names it (a send whose answer was lost); it answers
// the row's id when it did.
const reconcileSQL = `UPDATE {t} {a} SET platform_message_id = @pid, updated_at = now()
WHERE {a}.id = @id AND {scope} AND {a}.platform_message_id IS NULL RETURNING {a}.id`

// updateSQL moves the rows matching outcomes (the JSON of []*Outcome,
// parameter @outcomes) to {next}: stage timestamps are kept when already
// set, a failure records the provider's error, a row leaving "unknown"
// drops its explanation, and rows that would not change are not written.
//
// The next status is computed in SET and WHERE from the row being updated,
// never in a CTE: when two batches update one row at once, PostgreSQL
// re-evaluates SET and WHERE against the row the other batch committed,
// while a CTE's values are a snapshot from before the wait (which let a
// late "delivered" overwrite a "read").
const updateSQL = `
WITH v AS (
    SELECT * FROM jsonb_to_recordset(CAST(@outcomes AS jsonb)) AS x(platform_message_id text, final text, sent_at timestamptz,
        delivered_at timestamptz, read_at timestamptz, failed_at timestamptz, error_code int, error_title text, error_detail text)
)
UPDATE {t} {a} SET
    status       = {next},
    sent_at      = CASE WHEN {next} IN ({sent}) THEN COALESCE({a}.sent_at, v.sent_at, v.delivered_at, v.read_at) ELSE {a}.sent_at END,
    delivered_at = CASE WHEN {next} IN ({delivered}) THEN COALESCE({a}.delivered_at, v.delivered_at, v.read_at) ELSE {a}.delivered_at END,
    read_at      = CASE WHEN {next} IN ({read}) THEN COALESCE({a}.read_at, v.read_at) ELSE {a}.read_at END,
    failed_at    = CASE WHEN {next} = {failed} THEN v.failed_at ELSE {a}.failed_at END,
    error_code   = CASE WHEN {next} = {failed} THEN v.error_code ELSE {a}.error_code END,
    error_title  = CASE WHEN {next} = {failed} THEN COALESCE(v.error_title, '') WHEN {a}.status = {unknown} THEN '' ELSE {a}.error_title END,
    error_detail = CASE WHEN {next} = {failed} THEN COALESCE(v.error_detail, '') WHEN {a}.status = {unknown} THEN '' ELSE {a}.error_detail END,
    updated_at   = now()
FROM v
WHERE {a}.platform_message_id = v.platform_message_id AND {scope} AND {next} <> {a}.status
RETURNING {ret}`

// Result is what Apply did.
type Result struct {
	Unmatched []*Outcome  // outcomes that match no row of the table
	Changed   []uuid.UUID // Table.Returning of each row that changed
	// Reconciled is the id of each row that got its provider id from an
	// outcome's callback data (a send whose answer was lost), whether or
	// not its status then changed: a failed row stays failed.
	Reconciled []uuid.UUID
}

// Apply applies outcomes inside tx to the rows of orgID (and accountID,
// when the table's scope names it): first by provider id, then, for the
// outcomes no row has the id of, by the row id in their callback data
// (recording the provider id on the row). Duplicates and stale statuses
// change nothing.
func (a *Applier) Apply(ctx context.Context, tx *gorm.DB, orgID, accountID uuid.UUID, outcomes []*Outcome) (*Result, error) {
	res := &Result{}
	if len(outcomes) == 0 {
		return res, nil
	}
	db := tx.WithContext(ctx)
	args := func(extra map[string]any) map[string]any {
		m := map[string]any{"org": orgID, "acc": accountID}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	pids := make([]string, len(outcomes))
	var ids []uuid.UUID
	for i, o := range outcomes {
		pids[i] = o.PlatformID
		if id, ok := a.callbackID(o); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		ids = append(ids, uuid.Nil) // IN () is not SQL
	}
	var locked []uuid.UUID
	if err := db.Raw(a.lock, args(map[string]any{"pids": pids, "ids": ids})).Scan(&locked).Error; err != nil {
		return nil, err
	}
	update := func(os []*Outcome) error {
		b, err := json.Marshal(os)
		if err != nil {
			return err
		}
		var changed []uuid.UUID
		if err := db.Raw(a.update, args(map[string]any{"outcomes": string(b)})).Scan(&changed).Error; err != nil {
			return err
		}
		res.Changed = append(res.Changed, changed...)
		return nil
	}
	known := func(os []*Outcome) (map[string]bool, error) {
		pids := make([]string, len(os))
		for i, o := range os {
			pids[i] = o.PlatformID
		}
		var found []string
		if err := db.Raw(a.known, args(map[string]any{"pids": pids})).Scan(&found).Error; err != nil {
			return nil, err
		}
		seen := make(map[string]bool, len(found))
		for _, k := range found {
			seen[k] = true
		}
		return seen, nil
	}
	if err := update(outcomes); err != nil {
		return nil, err
	}
	seen, err := known(outcomes)
	if err != nil {
		return nil, err
	}
	var retry []*Outcome
	for _, o := range outcomes {
		if seen[o.PlatformID] {
			continue
		}
		// The send's answer was lost: the status carries our row id.
		id, ok := a.callbackID(o)
		if !ok {
			res.Unmatched = append(res.Unmatched, o)
			continue
		}
		var set []uuid.UUID
		if err := db.Raw(a.reconcile, args(map[string]any{"pid": o.PlatformID, "id": id})).Scan(&set).Error; err != nil {
			return nil, err
		}
		res.Reconciled = append(res.Reconciled, set...)
		// Matched or not, apply again by provider id: when nothing matched, a
		// concurrent batch may have just set the id (it held the row).
		retry = append(retry, o)
	}
	if len(retry) == 0 {
		return res, nil
	}
	if err := update(retry); err != nil {
		return nil, err
	}
	if seen, err = known(retry); err != nil {
		return nil, err
	}
	for _, o := range retry {
		if !seen[o.PlatformID] {
			res.Unmatched = append(res.Unmatched, o)
		}
	}
	return res, nil
}

func (a *Applier) callbackID(o *Outcome) (uuid.UUID, bool) {
	if o.Callback == "" || a.t.CallbackID == nil {
		return uuid.Nil, false
	}
	return a.t.CallbackID(o.Callback)
}
