package campaigns_test

import (
	"context"
	"testing"
	"time"

	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// The replies sweep counts the replies of the campaigns that can still get
// some (started, ended less than 72 hours ago) and leaves the others: a
// campaign completed four days ago keeps its count.
func TestSweepRepliesCountsOnlyCampaignsInTheWindow(t *testing.T) {
	t.Parallel()
	f := testfactory.New(t, testenv.DB(t))
	svc, _ := newService(t, f, f.Provider(nil))
	org := f.Org()
	acc := f.Account(org.ID)
	tmpl := f.Template(acc, "Hi {{1}}")
	now := time.Now().UTC()
	recent, recs := f.Campaign(tmpl, 2, func(c *models.Campaign) {
		c.Status, c.StartedAt, c.CompletedAt, c.SentCount = models.CampaignCompleted, ptr(now.Add(-2*time.Hour)), ptr(now.Add(-time.Hour)), 2
	})
	old, oldRecs := f.Campaign(tmpl, 1, func(c *models.Campaign) {
		c.Status, c.StartedAt, c.CompletedAt, c.SentCount = models.CampaignCompleted, ptr(now.Add(-100*time.Hour)), ptr(now.Add(-96*time.Hour)), 1
	})
	// The factory numbers each campaign's recipients alike: another number.
	oldRecs[0].PhoneNumber = "+15550309999"
	f.DB.Exec(`UPDATE campaign_recipients SET phone_number = ? WHERE campaign_id = ?`, oldRecs[0].PhoneNumber, old.ID)
	sent := map[string]time.Time{recs[0].PhoneNumber: now.Add(-2 * time.Hour), recs[1].PhoneNumber: now.Add(-2 * time.Hour),
		oldRecs[0].PhoneNumber: now.Add(-100 * time.Hour)}
	for number, at := range sent {
		f.DB.Exec(`UPDATE campaign_recipients SET status = 'sent', sent_at = ? WHERE phone_number = ?`, at, number)
	}
	// recs[0] answered an hour after its send; the old campaign's recipient
	// an hour after its own (in its window), but the sweep no longer looks.
	for _, number := range []string{recs[0].PhoneNumber, oldRecs[0].PhoneNumber} {
		c := f.Contact(org.ID, &acc.ID, func(c *models.Contact) { c.PhoneNumber = number })
		f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, occurred_at)
			VALUES (?, ?, ?, 'incoming', 'text', 'received', ?)`, org.ID, c.ID, acc.ID, sent[number].Add(time.Hour))
	}
	n, err := svc.SweepReplies(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("swept %d campaigns (%v), want the recent one", n, err)
	}
	if c := load(t, f, recent.ID); c.RepliedCount != 1 || c.RepliesCountedAt == nil {
		t.Fatalf("the recent campaign: %d replies, counted at %v", c.RepliedCount, c.RepliesCountedAt)
	}
	if c := load(t, f, old.ID); c.RepliedCount != 0 || c.RepliesCountedAt != nil {
		t.Fatalf("the old campaign was counted: %d at %v", c.RepliedCount, c.RepliesCountedAt)
	}
	// Its report counts it (a report is read whenever asked).
	if c, err := svc.Report(context.Background(), org.ID, old.ID); err != nil || c.RepliedCount != 1 {
		t.Fatalf("the old campaign's report: %+v, %v", c, err)
	}
}
