package statuses

import (
	"fmt"
	"strings"
	"testing"

	"wharf/internal/testenv"
	"wharf/models"
)

var (
	messageStages   = Stages{BeforeSend: []string{string(models.StatusPending)}}
	recipientStages = Stages{BeforeSend: []string{string(models.RecipientSending), string(models.RecipientUnknown)}}
	everyStatus     = []string{"", "pending", "sending", "unknown", "sent", "delivered", "read", "failed", "skipped", "deleted"}
)

// The order as the domains knew it before it had one place: a message
// moves forward from pending, failed only before delivery; a recipient
// from sending or unknown (a pending recipient was not sent).
func TestForward(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		st       Stages
		from, to string
		want     bool
	}{
		{messageStages, "pending", "sent", true}, {messageStages, "pending", "read", true}, {messageStages, "sent", "delivered", true},
		{messageStages, "delivered", "read", true}, {messageStages, "pending", "failed", true}, {messageStages, "sent", "failed", true},
		{messageStages, "delivered", "failed", false}, {messageStages, "read", "delivered", false}, {messageStages, "read", "read", false},
		{messageStages, "failed", "read", false}, {messageStages, "sent", "pending", false}, {messageStages, "sent", "deleted", false},
		{messageStages, "unknown", "sent", false},
		{recipientStages, "sending", "sent", true}, {recipientStages, "unknown", "delivered", true}, {recipientStages, "unknown", "failed", true},
		{recipientStages, "pending", "sent", false}, {recipientStages, "delivered", "failed", false}, {recipientStages, "failed", "sent", false},
		// A skipped recipient (opted out) was never sent: it is final.
		{recipientStages, "skipped", "sent", false}, {recipientStages, "skipped", "failed", false}, {recipientStages, "skipped", "read", false},
	} {
		if got := c.st.Forward(c.from, c.to); got != c.want {
			t.Errorf("%v: %s -> %s: %v, want %v", c.st.BeforeSend, c.from, c.to, got, c.want)
		}
	}
}

// The SQL form is the Go form: PostgreSQL evaluates NextSQL for every pair
// of a row's status and an outcome's final status, and each answer must be
// Forward's.
func TestNextSQLMatchesForward(t *testing.T) {
	t.Parallel()
	db := testenv.DB(t)
	finals := []string{"sent", "delivered", "read", "failed"}
	var rows []string
	for _, from := range everyStatus {
		for _, final := range finals {
			rows = append(rows, fmt.Sprintf("('%s', '%s')", from, final))
		}
	}
	for _, st := range []Stages{messageStages, recipientStages} {
		var got []struct{ From, Final, Next string }
		q := `SELECT r.status AS "from", v.final, ` + st.NextSQL("r") + ` AS next FROM (VALUES ` + strings.Join(rows, ", ") +
			`) AS x(status, final) CROSS JOIN LATERAL (SELECT x.status) AS r(status) CROSS JOIN LATERAL (SELECT x.final) AS v(final)`
		if err := db.Raw(q).Scan(&got).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(got) != len(rows) {
			t.Fatalf("%d rows", len(got))
		}
		for _, g := range got {
			want := g.From
			if st.Forward(g.From, g.Final) {
				want = g.Final
			}
			if g.Next != want {
				t.Errorf("%v: %q with %s -> %q, want %q", st.BeforeSend, g.From, g.Final, g.Next, want)
			}
		}
	}
}

// Reached lists a stage and those after it, the lists apply.go's update
// sets timestamps by.
func TestReached(t *testing.T) {
	t.Parallel()
	for s, want := range map[models.MessageStatus]string{models.StatusSent: "sent delivered read", models.StatusDelivered: "delivered read",
		models.StatusRead: "read"} {
		if got := strings.Join(Reached(s), " "); got != want {
			t.Errorf("%s: %q, want %q", s, got, want)
		}
	}
}
