package messaging_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
)

// The claims (of one message, and of a batch) read the rows they claim by
// their primary key, whatever the planner believes of the organization's
// size: a planner guessing a handful of rows for a fresh organization read
// every message of the organization (through messages_org_created) on
// every claim — quadratic in a burst, and in an organization of a million
// messages a million rows a claim.
func TestClaimsReadOnlyTheirRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	tmpl := f.TemplateAt(p, acc, "Hi {{1}}")
	svc, _ := newService(t, f, p)
	// Statistics taken while the organization had one message, then a
	// few thousand sent messages they do not know of, as in a new
	// system's or a new tenant's first minute.
	c := f.Contact(org.ID, &acc.ID)
	if err := f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, content, occurred_at, created_at, updated_at)
		VALUES (?, ?, ?, 'outgoing', 'text', 'sent', '{}', now(), now(), now())`, org.ID, c.ID, acc.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Exec(`ANALYZE messages`).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Exec(`INSERT INTO messages (organization_id, contact_id, account_id, direction, type, status, content, occurred_at, created_at, updated_at)
		SELECT ?, ?, ?, 'outgoing', 'text', 'sent', '{}', now(), now(), now() FROM generate_series(1, 3000)`, org.ID, c.ID, acc.ID).Error; err != nil {
		t.Fatal(err)
	}
	q, err := svc.QueueTemplate(ctx, org.ID, messaging.Actor{UserID: f.User(org, "Agent").ID},
		messaging.TemplateInput{PhoneNumber: "+15550107001", TemplateID: &tmpl.ID, Params: map[string]string{"1": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := svc.ExplainClaimBatch(ctx, org.ID, q.MessageID, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A task of a group (its payload's With) claims its messages by id too.
	with, err := svc.ExplainClaimBatch(ctx, org.ID, q.MessageID, []uuid.UUID{uuid.New(), uuid.New()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(with, `"messages_org_created"`) || !strings.Contains(with, `"messages_pkey"`) {
		t.Errorf("the claim of a group's task does not read its rows by primary key:\n%s", with)
	}
	if strings.Contains(plan, `"messages_org_created"`) || !strings.Contains(plan, `"messages_pkey"`) {
		t.Errorf("the claim does not read its rows by primary key:\n%s", plan)
	}
	if !strings.Contains(plan, `"messages_queued_org"`) {
		t.Errorf("the mates are not found through messages_queued_org:\n%s", plan)
	}
	for _, pkey := range []string{"contacts_pkey", "platform_accounts_pkey", "templates_pkey"} {
		if !strings.Contains(plan, `"`+pkey+`"`) {
			t.Errorf("the claim's joins do not use %s:\n%s", pkey, plan)
		}
	}
	one, err := svc.ExplainClaim(ctx, org.ID, q.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(one, `"messages_org_created"`) || !strings.Contains(one, `"messages_pkey"`) {
		t.Errorf("the claim of one message does not read it by primary key:\n%s", one)
	}
}
