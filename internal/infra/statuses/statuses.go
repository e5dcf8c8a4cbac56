// Package statuses turns the provider's delivery statuses into outcomes and
// applies them, forward only, to a table of sent messages (messages,
// campaign_recipients). The status consumers share it, so that the rules for
// matching a status to a row, and their SQL, exist once.
package statuses

import (
	"strconv"
	"time"

	"wharf/models"
	"wharf/platform"
)

// Outcome is what a batch of statuses amounts to for one provider message
// id: the furthest status, when each stage was first reached, and the error
// of a failure. It is computed once per batch, so that a message's sent,
// delivered and read in one batch become one row update. The JSON names are
// those the apply statement reads (jsonb_to_recordset).
type Outcome struct {
	PlatformID  string               `json:"platform_message_id"`
	Final       models.MessageStatus `json:"final"`
	SentAt      *time.Time           `json:"sent_at"`
	DeliveredAt *time.Time           `json:"delivered_at"`
	ReadAt      *time.Time           `json:"read_at"`
	FailedAt    *time.Time           `json:"failed_at"`
	ErrorCode   *int                 `json:"error_code"`
	ErrorTitle  string               `json:"error_title"`
	ErrorDetail string               `json:"error_detail"`
	Callback    string               `json:"-"` // biz_opaque_callback_data: the id of our row, for a send whose answer was lost
	Statuses    []platform.Status    `json:"-"`
}

// The ranks of the stages Reduce times (order.go).
var (
	deliveredRank, _ = rankOf(string(models.StatusDelivered))
	readRank, _      = rankOf(string(models.StatusRead))
)

// Reduce folds statuses into one Outcome per message, in first-seen order:
// the earliest time each stage was reached (a read implies delivered and
// sent), and the furthest stage as Final. A failure counts only for a
// message not delivered in the same batch (the database applies the same
// rule against what it already has). Unknown statuses (deleted, future
// ones) are dropped. now stands in for a missing timestamp.
func Reduce(statuses []platform.Status, now time.Time) []*Outcome {
	var out []*Outcome
	byID := map[string]*Outcome{}
	earliest := func(dst **time.Time, t time.Time) {
		if *dst == nil || t.Before(**dst) {
			*dst = &t
		}
	}
	for _, st := range statuses {
		failed := st.Status == string(models.StatusFailed)
		r, known := rankOf(st.Status)
		if !known && !failed {
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
		case failed:
			earliest(&o.FailedAt, at)
			o.ErrorCode, o.ErrorTitle, o.ErrorDetail = errCode(st), errTitle(st), errDetail(st)
		case r >= readRank:
			earliest(&o.ReadAt, at)
			fallthrough
		case r >= deliveredRank:
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

// unixTime reads the provider's timestamps (Unix seconds as a string);
// fallback stands in for a missing or malformed one.
func unixTime(s string, fallback time.Time) time.Time {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return time.Unix(n, 0).UTC()
	}
	return fallback
}

func errCode(st platform.Status) *int {
	if len(st.Errors) == 0 {
		return nil
	}
	return &st.Errors[0].Code
}

func errTitle(st platform.Status) string {
	if len(st.Errors) == 0 {
		return ""
	}
	if st.Errors[0].Title != "" {
		return st.Errors[0].Title
	}
	return st.Errors[0].Message
}

func errDetail(st platform.Status) string {
	if len(st.Errors) == 0 {
		return ""
	}
	return st.Errors[0].ErrorData.Details
}
