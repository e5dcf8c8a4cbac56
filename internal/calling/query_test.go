package calling_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/orgsettings"
	"wharf/internal/testfactory"
	"wharf/models"
)

func ptr[T any](v T) *T { return &v }

func ids(rows []calling.CallLogView) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func sameIDs(t *testing.T, what string, got []uuid.UUID, want ...uuid.UUID) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows %v, want %v", what, len(got), got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: rows %v, want %v (in this order)", what, got, want)
			return
		}
	}
}

// Every filter of GET /api/call-logs, newest first, only the caller's
// organization's calls, with their contact's number and agent's name.
func TestListCallLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t, calling.Config{}, nil)
	org := b.org.ID
	other := b.f.Org()
	contact := b.f.Contact(org, &b.account.ID)
	agent := b.f.User(b.org, "Agent")
	flow := uuid.New()
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

	// Account names: the account "Main" now (renamed to Support) logged
	// its old calls as "Main"; b.account is named by the factory.
	renamed := b.f.Account(org, func(a *models.PlatformAccount) { a.Name = "Support" })
	oldest := b.call(t, org, day.Add(1*time.Hour), func(l *models.CallLog) {
		l.PlatformAccount, l.AccountID, l.Status = "Main", &renamed.ID, models.CallMissed
	})
	mid := b.call(t, org, day.Add(16*time.Hour), func(l *models.CallLog) {
		l.PlatformAccount, l.AccountID, l.ContactID, l.AgentID = b.account.Name, &b.account.ID, &contact.ID, &agent.ID
		l.CallerPhone, l.IVRFlowID = "+44 20 7946 0958", &flow
	})
	newest := b.call(t, org, day.Add(40*time.Hour), func(l *models.CallLog) {
		l.PlatformAccount, l.Direction, l.Status, l.CallerPhone = b.account.Name, "outgoing", models.CallFailed, "+15550199999"
	})
	theirs := b.call(t, other.ID, day.Add(2*time.Hour), func(l *models.CallLog) { l.PlatformAccount = b.account.Name })

	list := func(f calling.CallLogFilter) []uuid.UUID {
		t.Helper()
		rows, total, err := s.ListCallLogs(ctx, org, f, paging.Params{Page: 1, Limit: 50})
		if err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		if total != int64(len(rows)) {
			t.Errorf("%+v: total %d for %d rows", f, total, len(rows))
		}
		return ids(rows)
	}
	sameIDs(t, "all", list(calling.CallLogFilter{}), newest.ID, mid.ID, oldest.ID)
	sameIDs(t, "status", list(calling.CallLogFilter{Status: "missed"}), oldest.ID)
	sameIDs(t, "direction", list(calling.CallLogFilter{Direction: "outgoing"}), newest.ID)
	sameIDs(t, "account by name, any case", list(calling.CallLogFilter{Account: "  " + b.account.Name + " "}), newest.ID, mid.ID)
	sameIDs(t, "account's old name", list(calling.CallLogFilter{Account: "main"}), oldest.ID)
	sameIDs(t, "renamed account's new name", list(calling.CallLogFilter{Account: "Support"}), oldest.ID)
	sameIDs(t, "unknown account", list(calling.CallLogFilter{Account: "Nope"}))
	sameIDs(t, "contact", list(calling.CallLogFilter{ContactID: &contact.ID}), mid.ID)
	sameIDs(t, "ivr flow", list(calling.CallLogFilter{IVRFlowID: &flow}), mid.ID)
	sameIDs(t, "phone, part of the digits", list(calling.CallLogFilter{Phone: "7946 09"}), mid.ID)
	sameIDs(t, "phone, shared digits", list(calling.CallLogFilter{Phone: "+1555"}), newest.ID, oldest.ID)
	sameIDs(t, "phone, no match", list(calling.CallLogFilter{Phone: "999888"}))
	sameIDs(t, "one day (UTC)", list(calling.CallLogFilter{StartDate: "2025-03-01", EndDate: "2025-03-01"}), mid.ID, oldest.ID)
	sameIDs(t, "from a day", list(calling.CallLogFilter{StartDate: "2025-03-02"}), newest.ID)
	sameIDs(t, "until a day", list(calling.CallLogFilter{EndDate: "2025-03-01"}), mid.ID, oldest.ID)
	sameIDs(t, "filters combine", list(calling.CallLogFilter{Account: b.account.Name, Direction: "incoming", Phone: "44"}), mid.ID)

	// Paging: newest first, the total of all pages.
	rows, total, err := s.ListCallLogs(ctx, org, calling.CallLogFilter{}, paging.Params{Page: 2, Limit: 2})
	if err != nil || total != 3 {
		t.Fatalf("page 2: %d, %v", total, err)
	}
	sameIDs(t, "page 2", ids(rows), oldest.ID)

	// The joined contact and agent, and none for a call without them.
	rows, _, _ = s.ListCallLogs(ctx, org, calling.CallLogFilter{ContactID: &contact.ID}, paging.Params{Page: 1, Limit: 10})
	if len(rows) != 1 || rows[0].ContactPhone == nil || *rows[0].ContactPhone != contact.PhoneNumber || rows[0].AgentName == nil ||
		*rows[0].AgentName != agent.FullName || string(rows[0].IVRPath) != "[]" {
		t.Fatalf("joined %+v", rows)
	}
	rows, _, _ = s.ListCallLogs(ctx, org, calling.CallLogFilter{Direction: "outgoing"}, paging.Params{Page: 1, Limit: 10})
	if rows[0].ContactPhone != nil || rows[0].AgentName != nil {
		t.Fatalf("a call without contact or agent: %+v", rows[0])
	}

	// The other organization sees only its own call.
	rows, total, err = s.ListCallLogs(ctx, other.ID, calling.CallLogFilter{Account: b.account.Name}, paging.Params{Page: 1, Limit: 10})
	if err != nil || total != 1 || rows[0].ID != theirs.ID {
		t.Fatalf("other organization: %v %d %v", ids(rows), total, err)
	}

	for f, msg := range map[*calling.CallLogFilter]string{
		{Direction: "inbound"}:                           "direction must be incoming or outgoing",
		{Status: "busy"}:                                 "status must be one of ringing",
		{Phone: "abc"}:                                   "phone must contain digits",
		{StartDate: "01/03/2025"}:                        "start_date must be a date (YYYY-MM-DD)",
		{EndDate: "2025-02-30"}:                          "end_date must be a date",
		{StartDate: "2025-03-02", EndDate: "2025-03-01"}: "end_date must not be before start_date",
		{StartDate: "2025-03-01T00:00:00Z", EndDate: "2025-03-01"}: "start_date must be a date",
	} {
		_, _, err := s.ListCallLogs(ctx, org, *f, paging.Params{Page: 1, Limit: 10})
		testfactory.WantError(t, err, apperr.Invalid, msg)
	}
}

// Dates are days of the organization's timezone: 16:00 UTC on March 1 is
// already March 2 in Tokyo.
func TestListCallLogsDatesInTheOrganizationsTimezone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t, calling.Config{}, nil)
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	morning := b.call(t, b.org.ID, day.Add(2*time.Hour))    // 11:00 March 1 in Tokyo
	afternoon := b.call(t, b.org.ID, day.Add(16*time.Hour)) // 01:00 March 2 in Tokyo
	if err := b.settings.Apply(ctx, b.org.ID, orgsettings.Update{Timezone: ptr("Asia/Tokyo")}); err != nil {
		t.Fatal(err)
	}
	for date, want := range map[string]uuid.UUID{"2025-03-01": morning.ID, "2025-03-02": afternoon.ID} {
		rows, _, err := s.ListCallLogs(ctx, b.org.ID, calling.CallLogFilter{StartDate: date, EndDate: date}, paging.Params{Page: 1, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		sameIDs(t, date+" in Tokyo", ids(rows), want)
	}
}

// A call log comes with its transfers, oldest first; another
// organization's call log and transfers are not found.
func TestGetCallLogAndTransfers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t, calling.Config{}, nil)
	now := time.Now().UTC().Truncate(time.Second)
	team := models.Team{ID: uuid.New(), OrganizationID: b.org.ID, Name: "Sales", AssignmentStrategy: "round_robin"}
	if err := b.f.DB.Create(&team).Error; err != nil {
		t.Fatal(err)
	}
	l := b.call(t, b.org.ID, now.Add(-time.Hour), func(l *models.CallLog) { l.Status = models.CallTransferring })
	first := b.transfer(t, l, models.TransferCompleted, now.Add(-50*time.Minute))
	second := b.transfer(t, l, models.TransferWaiting, now.Add(-10*time.Minute))
	if err := b.f.DB.Model(&second).Update("team_id", team.ID).Error; err != nil {
		t.Fatal(err)
	}
	lone := b.call(t, b.org.ID, now)
	other := b.f.Org()
	theirCall := b.call(t, other.ID, now)
	theirTransfer := b.transfer(t, theirCall, models.TransferWaiting, now)

	d, err := s.GetCallLog(ctx, b.org.ID, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != l.ID || d.Status != models.CallTransferring || len(d.Transfers) != 2 || d.Transfers[0].ID != first.ID ||
		d.Transfers[1].ID != second.ID || d.Transfers[1].TeamID == nil || *d.Transfers[1].TeamID != team.ID {
		t.Fatalf("detail %+v", d)
	}
	if d, err := s.GetCallLog(ctx, b.org.ID, lone.ID); err != nil || d.Transfers == nil || len(d.Transfers) != 0 {
		t.Fatalf("a call without transfers: %+v, %v (want an empty list)", d, err)
	}
	_, err = s.GetCallLog(ctx, b.org.ID, theirCall.ID)
	testfactory.WantError(t, err, apperr.NotFound, calling.MsgCallLogNotFound)
	_, err = s.GetCallLog(ctx, b.org.ID, uuid.New())
	testfactory.WantError(t, err, apperr.NotFound, calling.MsgCallLogNotFound)

	tr, err := s.GetTransfer(ctx, b.org.ID, second.ID)
	if err != nil || tr.ID != second.ID || tr.CallLogID != l.ID || tr.Status != models.TransferWaiting {
		t.Fatalf("transfer %+v, %v", tr, err)
	}
	_, err = s.GetTransfer(ctx, b.org.ID, theirTransfer.ID)
	testfactory.WantError(t, err, apperr.NotFound, calling.MsgTransferNotFound)

	all, total, err := s.ListTransfers(ctx, b.org.ID, "", paging.Params{Page: 1, Limit: 10})
	if err != nil || total != 2 || len(all) != 2 || all[0].ID != second.ID || all[1].ID != first.ID {
		t.Fatalf("transfers %+v %d %v", all, total, err)
	}
	waiting, total, err := s.ListTransfers(ctx, b.org.ID, "waiting", paging.Params{Page: 1, Limit: 10})
	if err != nil || total != 1 || waiting[0].ID != second.ID {
		t.Fatalf("waiting %+v %d %v", waiting, total, err)
	}
	_, _, err = s.ListTransfers(ctx, b.org.ID, "ringing", paging.Params{Page: 1, Limit: 10})
	testfactory.WantError(t, err, apperr.Invalid, "status must be one of waiting, connected, completed, abandoned, no_answer")
}
