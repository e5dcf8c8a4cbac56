package widgets_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/models"
)

// The overview counts the organization's own rows only: today's messages
// each way, the contacts of the last 24 hours, the unassigned active
// transfers, the sending campaigns, and the 7 days' delivery and read
// rates over what the provider took; "today" is the organization's day.
func TestOverview(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if err := b.f.DB.Exec(`UPDATE organizations SET settings = '{"timezone": "Asia/Tokyo"}' WHERE id = ?`, b.org.ID).Error; err != nil {
		t.Fatal(err)
	}
	empty, err := b.s.Overview(ctx, b.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	now := time.Now().In(tokyo)
	if empty.Timezone != "Asia/Tokyo" || !empty.Today.Equal(time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, tokyo)) ||
		!empty.RatesFrom.Equal(empty.Today.AddDate(0, 0, -6)) || empty.Sent != 0 || empty.DeliveryRate != 0 || empty.ReadRate != 0 {
		t.Fatalf("empty overview %+v", empty)
	}

	acc := b.f.Account(b.org.ID)
	a, c, old := b.f.Contact(b.org.ID, &acc.ID), b.f.Contact(b.org.ID, &acc.ID), b.f.Contact(b.org.ID, &acc.ID)
	put := func(orgID, contactID uuid.UUID, ago, direction, status string) {
		t.Helper()
		if err := b.f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, direction, type, status, occurred_at, created_at)
			VALUES (?, ?, ?, 'text', ?, now() - CAST(? AS interval), now() - CAST(? AS interval))`,
			orgID, contactID, direction, status, ago, ago).Error; err != nil {
			t.Fatal(err)
		}
	}
	put(b.org.ID, a.ID, "0 s", "incoming", "received")
	put(b.org.ID, a.ID, "0 s", "incoming", "received")
	put(b.org.ID, a.ID, "0 s", "outgoing", "read")
	put(b.org.ID, c.ID, "0 s", "outgoing", "delivered")
	put(b.org.ID, c.ID, "0 s", "outgoing", "pending") // queued: out today, not in the rates
	put(b.org.ID, old.ID, "25 hours", "outgoing", "failed")
	put(b.org.ID, old.ID, "26 hours", "outgoing", "sent")
	put(b.org.ID, old.ID, "8 days", "outgoing", "read") // before the rates' days
	other := b.f.Org()
	oc := b.f.Contact(other.ID, nil)
	put(other.ID, oc.ID, "0 s", "incoming", "received")

	tmpl := b.f.Template(acc, "Hi {{1}}")
	b.f.Campaign(tmpl, 1, func(cp *models.Campaign) { cp.Status = models.CampaignSending })
	b.f.Campaign(tmpl, 1, func(cp *models.Campaign) { cp.Status = models.CampaignPaused })
	if err := b.f.DB.Exec(`INSERT INTO agent_transfers (organization_id, contact_id, status, agent_id) VALUES (?, ?, 'active', NULL),
		(?, ?, 'active', ?), (?, ?, 'resumed', NULL), (?, ?, 'active', NULL)`,
		b.org.ID, a.ID, b.org.ID, c.ID, b.owner.UserID, b.org.ID, old.ID, other.ID, oc.ID).Error; err != nil {
		t.Fatal(err)
	}

	o, err := b.s.Overview(ctx, b.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o.MessagesInToday != 2 || o.MessagesOutToday != 3 || o.ActiveConversations != 2 || o.WaitingTransfers != 1 || o.CampaignsRunning != 1 {
		t.Fatalf("tiles %+v", o)
	}
	// Taken by the provider in the 7 days: read, delivered, failed, sent.
	if o.Sent != 4 || o.Delivered != 2 || o.Read != 1 || o.DeliveryRate != 50 || o.ReadRate != 25 {
		t.Fatalf("rates %+v", o)
	}
}
