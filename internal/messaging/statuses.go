package messaging

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/models"
	"wharf/platform"
)

// statusRank orders the statuses a message moves through.
var statusRank = map[string]int{models.StatusPending: 0, models.StatusSent: 1, models.StatusDelivered: 2, models.StatusRead: 3}

// Outcome is what a batch of statuses amounts to for one provider message
// id: the furthest status, when each stage was first reached, and the error
// of a failure. It is computed once per batch, so that a message's sent,
// delivered and read in one batch become one row update.
type Outcome struct {
	PlatformID  string            `json:"pid"`
	Final       string            `json:"final"`
	SentAt      *time.Time        `json:"sent_ts"`
	DeliveredAt *time.Time        `json:"deliv_ts"`
	ReadAt      *time.Time        `json:"read_ts"`
	FailedAt    *time.Time        `json:"fail_ts"`
	ErrorCode   *int              `json:"code"`
	ErrorTitle  string            `json:"title"`
	ErrorDetail string            `json:"detail"`
	Callback    string            `json:"-"`
	Statuses    []platform.Status `json:"-"`
}

// Reduce folds statuses into one Outcome per message, in first-seen order:
// the earliest time each stage was reached (a read implies delivered and
// sent), and the furthest stage as Final. A failure counts only for a
// message not delivered in the same batch (the database applies the same
// rule against what it already has). Unknown statuses (deleted, future
// ones) are dropped.
func Reduce(statuses []platform.Status, now time.Time) []*Outcome {
	var out []*Outcome
	byID := map[string]*Outcome{}
	earliest := func(dst **time.Time, t time.Time) {
		if *dst == nil || t.Before(**dst) {
			*dst = &t
		}
	}
	for _, st := range statuses {
		rank, known := statusRank[st.Status]
		if !known && st.Status != models.StatusFailed {
			continue
		}
		o, ok := byID[st.ID]
		if !ok {
			o = &Outcome{PlatformID: st.ID}
			byID[st.ID] = o
			out = append(out, o)
		}
		o.Statuses = append(o.Statuses, st)
		if o.Callback == "" {
			o.Callback = st.BizOpaqueCallbackData
		}
		at := unixTime(st.Timestamp, now)
		switch {
		case st.Status == models.StatusFailed:
			earliest(&o.FailedAt, at)
			o.ErrorCode, o.ErrorTitle, o.ErrorDetail = errCode(st), errTitle(st), errDetail(st)
		case rank >= 3:
			earliest(&o.ReadAt, at)
			fallthrough
		case rank >= 2:
			earliest(&o.DeliveredAt, at)
			fallthrough
		default:
			earliest(&o.SentAt, at)
		}
	}
	for _, o := range out {
		switch {
		case o.ReadAt != nil:
			o.Final = models.StatusRead
		case o.DeliveredAt != nil:
			o.Final = models.StatusDelivered
		case o.FailedAt != nil:
			o.Final = models.StatusFailed
		default:
			o.Final = models.StatusSent
		}
	}
	return out
}

// StatusSQL builds the statement that applies outcomes (the JSON of
// []*Outcome, parameter @outcomes) to the rows of table (aliased alias)
// whose platform_message_id matches: each row moves to next (a CASE over
// alias.status and v.final), stage timestamps are kept when already set, a
// failure records the provider's error, a row leaving "unknown" drops its
// explanation, and rows that would not change are not written. scope adds
// conditions (tenant, account); returning names what to return.
//
// The next status is computed in SET and WHERE from the row being updated,
// never in a CTE: when two batches update one row at once, PostgreSQL
// re-evaluates SET and WHERE against the row the other batch committed,
// while a CTE's values are a snapshot from before the wait (which let a
// late "delivered" overwrite a "read").
func StatusSQL(table, alias, next, scope, returning string) string {
	r := strings.NewReplacer("{t}", table, "{a}", alias, "{next}", next, "{scope}", scope, "{ret}", returning)
	return r.Replace(`
WITH v AS (
    SELECT * FROM jsonb_to_recordset(CAST(@outcomes AS jsonb)) AS x(pid text, final text, sent_ts timestamptz,
        deliv_ts timestamptz, read_ts timestamptz, fail_ts timestamptz, code int, title text, detail text)
)
UPDATE {t} {a} SET
    status       = {next},
    sent_at      = CASE WHEN {next} IN ('sent', 'delivered', 'read', 'failed') THEN COALESCE({a}.sent_at, v.sent_ts, v.deliv_ts, v.read_ts) ELSE {a}.sent_at END,
    delivered_at = CASE WHEN {next} IN ('delivered', 'read') THEN COALESCE({a}.delivered_at, v.deliv_ts, v.read_ts) ELSE {a}.delivered_at END,
    read_at      = CASE WHEN {next} = 'read' THEN COALESCE({a}.read_at, v.read_ts) ELSE {a}.read_at END,
    failed_at    = CASE WHEN {next} = 'failed' THEN v.fail_ts ELSE {a}.failed_at END,
    error_code   = CASE WHEN {next} = 'failed' THEN v.code ELSE {a}.error_code END,
    error_title  = CASE WHEN {next} = 'failed' THEN COALESCE(v.title, '') WHEN {a}.status = 'unknown' THEN '' ELSE {a}.error_title END,
    error_detail = CASE WHEN {next} = 'failed' THEN COALESCE(v.detail, '') WHEN {a}.status = 'unknown' THEN '' ELSE {a}.error_detail END,
    updated_at   = now()
FROM v
WHERE {a}.platform_message_id = v.pid AND {scope} AND {next} <> {a}.status
RETURNING {ret}`)
}

// bulkStatusSQL applies outcomes to messages: forward only, and failed only
// from pending or sent.
var bulkStatusSQL = StatusSQL("messages", "m", `(CASE
        WHEN v.final = 'failed'    AND m.status IN ('pending', 'sent')              THEN 'failed'
        WHEN v.final = 'read'      AND m.status IN ('pending', 'sent', 'delivered') THEN 'read'
        WHEN v.final = 'delivered' AND m.status IN ('pending', 'sent')              THEN 'delivered'
        WHEN v.final = 'sent'      AND m.status = 'pending'                         THEN 'sent'
        ELSE m.status END)`, "m.organization_id = @org AND m.account_id = @acc", "m.platform_message_id")

// ApplyStatuses applies a batch of provider statuses to outbound messages,
// inside tx, in a few set-based statements. Statuses of messages it does not
// know, even through the callback data a lost send leaves behind, are
// returned for other domains (campaigns) or the log.
func (s *Service) ApplyStatuses(ctx context.Context, tx *gorm.DB, orgID, accountID uuid.UUID, outcomes []*Outcome) ([]*Outcome, error) {
	if len(outcomes) == 0 {
		return nil, nil
	}
	if err := s.bulkApply(ctx, tx, orgID, accountID, outcomes); err != nil {
		return nil, err
	}
	// Which of the rest exist (duplicates and stale statuses change nothing)?
	ids := make([]string, len(outcomes))
	for i, o := range outcomes {
		ids[i] = o.PlatformID
	}
	var known []string
	if err := tx.WithContext(ctx).Raw(`SELECT platform_message_id FROM messages WHERE account_id = ? AND platform_message_id IN ?`,
		accountID, ids).Scan(&known).Error; err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(known))
	for _, k := range known {
		seen[k] = true
	}
	var unknown, retry []*Outcome
	for _, o := range outcomes {
		if seen[o.PlatformID] {
			continue
		}
		// The send's answer was lost: the status carries our message id.
		cb, err := uuid.Parse(o.Callback)
		if err != nil {
			unknown = append(unknown, o)
			continue
		}
		res := tx.WithContext(ctx).Exec(`UPDATE messages SET platform_message_id = ?, updated_at = now()
			WHERE id = ? AND organization_id = ? AND account_id = ? AND platform_message_id IS NULL`, o.PlatformID, cb, orgID, accountID)
		if res.Error != nil {
			return nil, res.Error
		}
		// Matched or not, apply again by provider id: when nothing matched, a
		// concurrent batch may have just set the id (it held the row).
		retry = append(retry, o)
	}
	if len(retry) == 0 {
		return unknown, nil
	}
	if err := s.bulkApply(ctx, tx, orgID, accountID, retry); err != nil {
		return nil, err
	}
	ids = ids[:0]
	for _, o := range retry {
		ids = append(ids, o.PlatformID)
	}
	known = known[:0]
	if err := tx.WithContext(ctx).Raw(`SELECT platform_message_id FROM messages WHERE account_id = ? AND platform_message_id IN ?`,
		accountID, ids).Scan(&known).Error; err != nil {
		return nil, err
	}
	for _, k := range known {
		seen[k] = true
	}
	for _, o := range retry {
		if !seen[o.PlatformID] {
			unknown = append(unknown, o)
		}
	}
	return unknown, nil
}

func (s *Service) bulkApply(ctx context.Context, tx *gorm.DB, orgID, accountID uuid.UUID, outcomes []*Outcome) error {
	b, err := json.Marshal(outcomes)
	if err != nil {
		return err
	}
	var changed []string
	return tx.WithContext(ctx).Raw(bulkStatusSQL, map[string]any{"outcomes": string(b), "org": orgID, "acc": accountID}).Scan(&changed).Error
}
