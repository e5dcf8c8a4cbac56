package campaigns_test

import (
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// A campaign's report through the simulator: recipients who answer within
// 72 hours of their send are replies (once each, however many messages),
// a message before the send or after the window is not, nor is a message
// from someone who was not a recipient; the rate is of the recipients
// sent; the recipients list and the CSV export say when each replied; the
// campaign list then shows the kept count.
func TestCampaignReportCountsRepliesWithinTheWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "TIER_UNLIMITED", nil, noCap)
	f.StartWorker()
	a := f.Admin.Auth()
	from := func(i int) string { return number(i)[1:] }
	// number(3) wrote before the campaign: not a reply.
	f.Incoming(platformsim.Incoming{From: from(3), Type: "text", Text: "hello before"})
	// A minute before, so that the campaign's sends are not of the same
	// second (which would count it).
	apptest.Eventually(t, 10*time.Second, "the early message stored", func() bool {
		return f.DB.Exec(`UPDATE messages SET occurred_at = occurred_at - interval '1 minute' WHERE organization_id = ? AND direction = 'incoming'`,
			f.OrgID).RowsAffected == 1
	})
	c := f.campaign(5, nil)
	f.Do("POST", "/api/campaigns/"+c.ID+"/start", nil, a).Expect(t, 200)
	f.waitStatus(c.ID, "completed", 30*time.Second)

	// Replies: number(0) twice, number(1) once; number(9) was no recipient.
	for _, in := range []platformsim.Incoming{{From: from(0), Type: "text", Text: "yes"}, {From: from(0), Type: "text", Text: "yes again"},
		{From: from(1), Type: "text", Text: "thanks"}, {From: from(9), Type: "text", Text: "who is this"}} {
		f.Incoming(in)
	}
	apptest.Eventually(t, 10*time.Second, "the replies stored", func() bool {
		var n int64
		f.DB.Raw(`SELECT count(*) FROM messages WHERE organization_id = ? AND direction = 'incoming'`, f.OrgID).Scan(&n)
		return n == 5
	})
	// number(2) answers after the window (its message dated 73 hours after
	// its send).
	f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, occurred_at)
		SELECT c.organization_id, c.id, c.account_id, 'incoming', 'text', 'received', r.sent_at + interval '73 hours'
		FROM contacts c JOIN campaign_recipients r ON r.phone_number = c.phone_number AND r.campaign_id = ?
		WHERE c.phone_number = ?`, c.ID, number(2))

	var report struct {
		Campaign struct {
			SentCount        int     `json:"sent_count"`
			RepliedCount     int     `json:"replied_count"`
			ReplyRate        float64 `json:"reply_rate"`
			RepliesCountedAt *string `json:"replies_counted_at"`
		} `json:"campaign"`
		ReplyWindowHours int     `json:"reply_window_hours"`
		ReplyRate        float64 `json:"reply_rate"`
		DeliveryRate     float64 `json:"delivery_rate"`
		FailureRate      float64 `json:"failure_rate"`
	}
	f.Do("GET", "/api/campaigns/"+c.ID+"/report", nil, a).Expect(t, 200).Into(t, &report)
	if report.Campaign.SentCount != 5 || report.Campaign.RepliedCount != 2 || report.ReplyRate != 0.4 || report.Campaign.ReplyRate != 0.4 ||
		report.ReplyWindowHours != 72 || report.Campaign.RepliesCountedAt == nil || report.FailureRate != 0 {
		t.Fatalf("report: %+v", report)
	}

	var page struct {
		Items []struct {
			PhoneNumber string  `json:"phone_number"`
			RepliedAt   *string `json:"replied_at"`
		} `json:"items"`
	}
	f.Do("GET", "/api/campaigns/"+c.ID+"/recipients?limit=10", nil, a).Expect(t, 200).Into(t, &page)
	replied := map[string]bool{}
	for _, r := range page.Items {
		if r.RepliedAt != nil {
			replied[r.PhoneNumber] = true
		}
	}
	if len(page.Items) != 5 || len(replied) != 2 || !replied[number(0)] || !replied[number(1)] {
		t.Fatalf("recipients who replied: %v of %+v", replied, page.Items)
	}
	rows := f.exportCSV(t, c.ID, "", a)
	if rows[0][11] != "replied_at" {
		t.Fatalf("export header %q", rows[0])
	}
	for _, row := range rows[1:] {
		if want := row[0] == "'"+number(0) || row[0] == "'"+number(1); want != (row[11] != "") {
			t.Fatalf("export row %q: replied_at %q", row, row[11])
		}
	}
	var list struct {
		Items []struct {
			ID           string  `json:"id"`
			RepliedCount int     `json:"replied_count"`
			ReplyRate    float64 `json:"reply_rate"`
		} `json:"items"`
	}
	f.Do("GET", "/api/campaigns", nil, a).Expect(t, 200).Into(t, &list)
	if len(list.Items) != 1 || list.Items[0].RepliedCount != 2 || list.Items[0].ReplyRate != 0.4 {
		t.Fatalf("campaign list: %+v", list.Items)
	}
	f.Do("GET", "/api/campaigns/"+c.ID+"/report", nil, f.CreateUser(a, "agent-report@x.com", "Agent").Auth()).Expect(t, 403)
	f.Do("GET", "/api/campaigns/00000000-0000-0000-0000-000000000001/report", nil, a).Expect(t, 404)
}
