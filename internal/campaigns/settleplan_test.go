package campaigns

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

// A chunk's settle reads its recipients by primary key, in id order, even
// in a table small enough that reading it whole looks cheap to a planner
// that guesses 100 outcomes: a first campaign of 20,000 recipients read all
// of them for every chunk of 16.
func TestSettleReadsOnlyTheChunk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	org := f.Org()
	tmpl := f.Template(f.Account(org.ID), "Hi {{1}}")
	c, _ := f.Campaign(tmpl, 0)
	manyRecipients(t, f, c, "+1555031", 20000)
	s := &Service{db: f.DB, log: testenv.Quiet()}
	claimed, err := s.claim(ctx, c.ID, 16)
	if err != nil || len(claimed) != 16 {
		t.Fatalf("claimed %d (%v)", len(claimed), err)
	}
	var outcomes []settlement
	for _, r := range claimed {
		outcomes = append(outcomes, sentTo(r.ID, "wamid."+r.ID.String()))
	}
	body, err := json.Marshal(outcomes)
	if err != nil {
		t.Fatal(err)
	}
	var plan string
	if err := f.DB.Raw("EXPLAIN (FORMAT JSON) "+settleSQL, map[string]any{"outcomes": string(body), "n": len(outcomes)}).
		Row().Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan, `"Seq Scan"`) || !strings.Contains(plan, `"campaign_recipients_pkey"`) {
		t.Errorf("the settle does not read its recipients by primary key:\n%s", plan)
	}
}

// manyRecipients gives campaign c n pending recipients numbered prefix and
// five digits, and analyzes the table, as a plan test's fixture.
func manyRecipients(t *testing.T, f *testfactory.Factory, c models.Campaign, prefix string, n int) {
	t.Helper()
	if err := f.DB.Exec(`INSERT INTO campaign_recipients (campaign_id, organization_id, phone_number, name, data, status)
		SELECT ?, ?, ? || lpad(i::text, 5, '0'), 'R', '{}', 'pending' FROM generate_series(1, ?) AS i`,
		c.ID, c.OrganizationID, prefix, n).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Exec(`ANALYZE campaign_recipients`).Error; err != nil {
		t.Fatal(err)
	}
}
