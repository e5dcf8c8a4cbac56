package campaigns

import (
	"context"
	"testing"

	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// One settle statement records a whole chunk with the rules each outcome had
// as a statement of its own: a sent recipient that a status webhook already
// moved on keeps its status (its provider id is filled when missing); the
// other outcomes move only recipients still sending; a release clears the
// claim; only real attempts count.
func TestSettleRecordsAChunkInOneStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	tmpl := f.Template(f.Account(org.ID), "Hi {{1}}")
	c, recs := f.Campaign(tmpl, 7)
	s := &Service{db: f.DB, log: testenv.Quiet()}

	claimed, err := s.claim(ctx, c.ID, 7)
	if err != nil || len(claimed) != 7 {
		t.Fatalf("claimed %d recipients (%v), want 7", len(claimed), err)
	}
	// A status webhook settled recipient 1 before the lane recorded its send.
	f.DB.Exec(`UPDATE campaign_recipients SET status = 'delivered', delivered_at = now() WHERE id = ?`, recs[1].ID)
	// The sweep called recipient 6 unknown while its failure was on its way.
	f.DB.Exec(`UPDATE campaign_recipients SET status = 'unknown' WHERE id = ?`, recs[6].ID)

	code := 131026
	s.settle(ctx, []settlement{
		sentTo(recs[0].ID, "wamid.0"),
		sentTo(recs[1].ID, "wamid.1"),
		failedTo(recs[2].ID, models.RecipientFailed, true, &code, "Message undeliverable", "not on the platform"),
		failedTo(recs[3].ID, models.RecipientUnknown, true, nil, "send outcome unknown", "the connection broke"),
		released(recs[4].ID, true),
		released(recs[5].ID, false),
		failedTo(recs[6].ID, models.RecipientFailed, true, &code, "late", "late"),
	})

	got := map[int]models.CampaignRecipient{}
	for i, r := range recs {
		var row models.CampaignRecipient
		if err := f.DB.Take(&row, "id = ?", r.ID).Error; err != nil {
			t.Fatal(err)
		}
		got[i] = row
	}
	check := func(i int, status models.RecipientStatus, attempts int, claimed bool) {
		t.Helper()
		r := got[i]
		if r.Status != status || r.Attempts != attempts || (r.ClaimID != nil) != claimed {
			t.Errorf("recipient %d: status %s, attempts %d, claimed %v; want %s, %d, %v", i, r.Status, r.Attempts, r.ClaimID != nil,
				status, attempts, claimed)
		}
	}
	check(0, models.RecipientSent, 0, true)
	check(1, models.RecipientDelivered, 0, true)
	check(2, models.RecipientFailed, 1, true)
	check(3, models.RecipientUnknown, 1, true)
	check(4, models.RecipientPending, 1, false)
	check(5, models.RecipientPending, 0, false)
	check(6, models.RecipientUnknown, 0, true)
	if p := got[0].PlatformMessageID; p == nil || *p != "wamid.0" || got[0].SentAt == nil {
		t.Errorf("recipient 0: provider id %v, sent_at %v", p, got[0].SentAt)
	}
	if p := got[1].PlatformMessageID; p == nil || *p != "wamid.1" || got[1].SentAt == nil {
		t.Errorf("recipient 1 (delivered first): provider id %v, sent_at %v; want them filled", p, got[1].SentAt)
	}
	if r := got[2]; r.ErrorCode == nil || *r.ErrorCode != code || r.ErrorTitle != "Message undeliverable" || r.FailedAt == nil {
		t.Errorf("recipient 2: error %v %q, failed_at %v", r.ErrorCode, r.ErrorTitle, r.FailedAt)
	}
	if r := got[3]; r.ErrorCode != nil || r.ErrorTitle != "send outcome unknown" || r.FailedAt != nil {
		t.Errorf("recipient 3: error %v %q, failed_at %v", r.ErrorCode, r.ErrorTitle, r.FailedAt)
	}
	if r := got[4]; r.SendStartedAt != nil {
		t.Errorf("recipient 4 released: send_started_at %v", r.SendStartedAt)
	}
}
