package statuses

import (
	"fmt"
	"slices"
	"strings"

	"wharf/models"
)

// The forward-only order of delivery statuses. This is the one place it is
// written: Reduce ranks the provider's statuses with it, Stages.Forward
// answers it in Go (the integration's Platform Messages), and Stages.NextSQL
// writes it as the SQL CASE with which the bulk update moves messages and
// campaign recipients (apply.go; TestNextSQLMatchesForward runs both over
// every pair of statuses in PostgreSQL).
//
// A row starts at a status before the send (each table names its own:
// a message's pending, a recipient's sending or unknown), then moves up
// progress only. Failed ends a row not yet at failedBefore; nothing leaves
// failed. A status in no stage is final: a recipient skipped (opted out of
// marketing) was never sent and no status moves it.
var progress = []models.MessageStatus{models.StatusSent, models.StatusDelivered, models.StatusRead}

// failedBefore is the first stage a failure no longer reaches: a message
// delivered stays delivered.
const failedBefore = models.StatusDelivered

// rankOf is a progress stage's rank: 1 for sent, up to len(progress); 0
// and false for any other status.
func rankOf(s string) (int, bool) {
	i := slices.Index(progress, models.MessageStatus(s))
	return i + 1, i >= 0
}

// Stages is the order as it applies to one table: the statuses its rows
// have before the send (rank 0).
type Stages struct {
	BeforeSend []string
}

// rank is a status's rank, and whether the status moves at all (a status
// before the send, or a progress stage; never failed or one unknown).
func (st Stages) rank(s string) (int, bool) {
	if slices.Contains(st.BeforeSend, s) {
		return 0, true
	}
	return rankOf(s)
}

// Forward tells whether a row at from moves to to.
func (st Stages) Forward(from, to string) bool {
	r, ok := st.rank(from)
	if !ok || from == to {
		return false
	}
	if to == string(models.StatusFailed) {
		before, _ := rankOf(string(failedBefore))
		return r < before
	}
	next, ok := rankOf(to)
	return ok && next > r
}

// NextSQL is the SQL expression of a row's next status under Forward: the
// row is alias.status, the status it may move to v.final; it yields
// alias.status when the row does not move.
func (st Stages) NextSQL(alias string) string {
	targets := append([]string{string(models.StatusFailed)}, reversed(progress)...)
	var b strings.Builder
	b.WriteString("(CASE")
	for _, to := range targets {
		var from []string
		for _, s := range st.all() {
			if st.Forward(s, to) {
				from = append(from, s)
			}
		}
		if len(from) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n        WHEN v.final = %s AND %s.status IN (%s) THEN %s", quote(to), alias, quoteAll(from), quote(to))
	}
	fmt.Fprintf(&b, "\n        ELSE %s.status END)", alias)
	return b.String()
}

// all is every status of the table that may move, in rank order.
func (st Stages) all() []string {
	out := slices.Clone(st.BeforeSend)
	for _, s := range progress {
		out = append(out, string(s))
	}
	return out
}

// Reached lists the statuses of a row that reached s: s and the progress
// stages after it (failed reached none).
func Reached(s models.MessageStatus) []string {
	var out []string
	r, _ := rankOf(string(s))
	for i, p := range progress {
		if i+1 >= r {
			out = append(out, string(p))
		}
	}
	return out
}

// InSQL is "expr IN ('a', 'b')" for the statuses given.
func InSQL(expr string, statuses ...string) string {
	return expr + " IN (" + quoteAll(statuses) + ")"
}

func reversed(s []models.MessageStatus) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = string(v)
	}
	return out
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = quote(v)
	}
	return strings.Join(q, ", ")
}
