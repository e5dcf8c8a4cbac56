package messaging_test

import (
	"context"
	"strings"
	"testing"

	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// A batch claim reads the rows it claims by their primary key, whatever the
// planner believes of the organization's size: written as id = ANY(array),
// a planner guessing a handful of rows for a fresh organization read every
// message of the organization (through messages_org_created) on every
// claim, which in an organization of a million messages is a million rows
// per batch.
func TestBatchClaimReadsOnlyTheBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	tmpl := f.TemplateAt(p, acc, "Hi {{1}}")
	svc, _ := newService(t, f, p)
	// A few thousand sent messages the statistics do not know of (no
	// ANALYZE since), as right after a burst.
	c := f.Contact(org.ID, &acc.ID)
	if err := f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, content, occurred_at, created_at, updated_at)
		SELECT ?, ?, ?, 'outgoing', 'text', 'sent', '{}', now(), now(), now() FROM generate_series(1, 3000)`, org.ID, c.ID, acc.ID).Error; err != nil {
		t.Fatal(err)
	}
	q, err := svc.QueueTemplate(ctx, org.ID, messaging.Actor{UserID: f.User(org, "Agent").ID},
		messaging.TemplateInput{PhoneNumber: "+15550107001", TemplateID: &tmpl.ID, Params: map[string]string{"1": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := svc.ExplainClaimBatch(ctx, org.ID, q.MessageID, messaging.QueuedBatch-1)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, `"messages_org_created"`) || !strings.Contains(plan, `"messages_pkey"`) {
		t.Errorf("the claim does not read its rows by primary key:\n%s", plan)
	}
	if !strings.Contains(plan, `"messages_queued_org"`) {
		t.Errorf("the mates are not found through messages_queued_org:\n%s", plan)
	}
}
